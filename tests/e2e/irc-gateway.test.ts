/**
 * IRC through the whole gateway against a real ngIRCd: the adapter configured by env as an operator
 * would, people on raw sockets, the real runner and the scripted model.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type IrcUser, ircUser, type PrivateIrcd, startNgircd } from "../helpers/ngircd.js";
import { platformPerTest } from "../helpers/per-test.js";

const CHANNEL = "#herald";
let ircd: PrivateIrcd;
const people: IrcUser[] = [];
const running = platformPerTest<{ close(): Promise<void> }>();
let n = 0;

beforeAll(async () => {
  ircd = await startNgircd();
});
afterAll(async () => {
  for (const p of people) p.close();
  await ircd.stop();
});

async function person(nick: string): Promise<IrcUser> {
  const p = await ircUser(ircd, nick);
  people.push(p);
  return p;
}

/** A fresh bot nick and channel per test; `alice` is allowed by her hostmask. */
async function start(env: Record<string, string> = {}) {
  const id = ++n;
  const nick = `herald${id}`;
  const channel = `${CHANNEL}${id}`;
  const alice = await person(`alice${id}`);
  await alice.join(channel);
  const h = await running.startHarness({
    env: {
      IRC_SERVER: ircd.host,
      IRC_PORT: String(ircd.port),
      IRC_TLS: "false",
      IRC_NICK: nick,
      IRC_CHANNELS: channel,
      IRC_ALLOWED_USERS: `alice${id}!~alice${id}@127.0.0.1`,
      IRC_SEND_BURST: "50",
      IRC_SEND_PER_SECOND: "20",
      ...env,
    },
  });
  await alice.waitFor((l) => l.command === "JOIN" && l.nick === nick);
  return { h, nick, channel, alice };
}

const fromBot = (p: IrcUser, nick: string, target: string) => p.messagesFrom(nick, target).map((l) => l.text);

describe("irc through the gateway", () => {
  it("answers a private message once", async () => {
    const { h, nick, alice } = await start();
    alice.say(nick, "Hello there");
    await alice.waitFor((l) => l.command === "PRIVMSG" && l.nick === nick);
    await h.gateway.runner.outbox.idle();
    await alice.sync();
    expect(fromBot(alice, nick, alice.nick)).toEqual(["echo: Hello there"]);
    expect(h.gateway.adapters.get("irc")?.status?.().state).toBe("running");
    const health = (await (await fetch(`${h.apiUrl}/health`)).json()) as {
      adapters: Record<string, { state: string }>;
    };
    expect(health.adapters["irc"]?.state).toBe("running");
  });

  it("a gateway restart answers nothing twice (IRC keeps no history to replay)", async () => {
    const { h, nick, alice } = await start();
    alice.say(nick, "once");
    await alice.waitFor((l) => l.command === "PRIVMSG" && l.nick === nick);
    await h.restart();
    await alice.waitFor(
      (l) =>
        l.command === "JOIN" &&
        l.nick === nick &&
        alice.lines.filter((x) => x.command === "JOIN" && x.nick === nick).length >= 2,
    );
    alice.say(nick, "twice");
    await alice.waitFor((l) => l.command === "PRIVMSG" && l.nick === nick && l.text === "echo: twice");
    await h.gateway.runner.outbox.idle();
    await alice.sync();
    expect(fromBot(alice, nick, alice.nick)).toEqual(["echo: once", "echo: twice"]);
    expect(h.llm.requests).toHaveLength(2);
  });

  it("in a channel answers `nick: …` and ignores chatter without the nick", async () => {
    const { h, nick, channel, alice } = await start();
    alice.say(channel, "talking among ourselves");
    alice.say(channel, `${nick}: what's the time?`);
    await alice.waitFor((l) => l.command === "PRIVMSG" && l.nick === nick && l.target === channel);
    await h.gateway.runner.outbox.idle();
    await alice.sync();
    expect(fromBot(alice, nick, channel)).toEqual([`${alice.nick}: echo: what's the time?`]);
    expect(JSON.stringify(h.llm.requests)).not.toContain("among ourselves");
  });

  it("answers channel messages without the nick when IRC_REQUIRE_MENTION=false", async () => {
    const { nick, channel, alice } = await start({ IRC_REQUIRE_MENTION: "false" });
    alice.say(channel, "anyone?");
    const line = await alice.waitFor(
      (l) => l.command === "PRIVMSG" && l.nick === nick && l.target === channel,
    );
    expect(line.text).toBe(`${alice.nick}: echo: anyone?`);
  });

  it("splits a long reply into lines within 512 bytes including the relay prefix, all text in order", async () => {
    const { h, nick, alice } = await start();
    const words = Array.from({ length: 400 }, (_, i) => `wört${i}`);
    h.llm.script({ text: `${words.slice(0, 200).join(" ")}\n\n${words.slice(200).join(" ")}` });
    alice.say(nick, "tell me a lot");
    await vi.waitFor(
      async () => {
        await alice.sync();
        expect(fromBot(alice, nick, alice.nick).join(" ").split(" ")).toEqual(words);
      },
      { timeout: 10_000 },
    );
    const raws = alice.messagesFrom(nick, alice.nick).map((l) => l.raw);
    expect(raws.length).toBeGreaterThanOrEqual(6);
    for (const raw of raws) expect(Buffer.byteLength(`${raw}\r\n`)).toBeLessThanOrEqual(512);
  });

  it("gives an unknown user a pairing code and no model call", async () => {
    const { h, nick } = await start();
    const bob = await person(`bob${n}`);
    bob.say(nick, "hi");
    const line = await bob.waitFor(
      (l) => l.command === "PRIVMSG" && l.nick === nick && /pairing code/i.test(l.text),
    );
    expect(line.text).toMatch(/pairing code is [A-Z0-9]+/i);
    expect(h.llm.requests).toHaveLength(0);
  });

  it("refuses a TLS server whose certificate it cannot verify, naming the settings", async () => {
    const tlsIrcd = await startNgircd({ tls: true });
    try {
      const h = await running.startHarness({
        env: {
          IRC_SERVER: tlsIrcd.host,
          IRC_PORT: String(tlsIrcd.tlsPort),
          IRC_TLS: "true",
          IRC_NICK: `heraldtls${++n}`,
        },
      });
      const health = (await (await fetch(`${h.apiUrl}/health`)).json()) as {
        adapters: Record<string, { state: string; detail?: string }>;
      };
      expect(health.adapters["irc"]?.state).toBe("failed");
      expect(health.adapters["irc"]?.detail).toMatch(/\(TLS\): self-signed certificate.*IRC_TLS/);
    } finally {
      await tlsIrcd.stop();
    }
  });

  it("reconnects after the server went away, joins its channels again and answers", async () => {
    const { h, nick } = await start({});
    await ircd.kill();
    await vi.waitFor(() => expect(h.gateway.adapters.get("irc")?.status?.().state).toBe("reconnecting"));
    await ircd.start();
    await vi.waitFor(() => expect(h.gateway.adapters.get("irc")?.status?.().state).toBe("running"), {
      timeout: 15_000,
    });
    const alice = await person(`alice${n}`);
    const channel = `${CHANNEL}${n}`;
    await alice.join(channel);
    // The bot is back in the channel (NAMES lists it) and answers there.
    alice.send(`NAMES ${channel}`);
    await alice.waitFor(
      (l) => l.command === "353" && l.text.split(" ").some((x) => x.replace(/^[@+]/, "") === nick),
    );
    alice.say(channel, `${nick}, still there?`);
    const line = await alice.waitFor(
      (l) => l.command === "PRIVMSG" && l.nick === nick && l.target === channel,
    );
    expect(line.text).toBe(`${alice.nick}: echo: still there?`);
  }, 30_000);
});
