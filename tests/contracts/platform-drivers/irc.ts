/**
 * The IRC driver of the PlatformAdapter contract: the real adapter (irc-framework) against a private
 * ngIRCd, with a person in the channel (its operator) who sees what the bot says. Rate limits are the
 * adapter's own flood control (a budget used up by lines to another target); a refusal is a moderated
 * channel (404), an unknown chat a nick nobody has (401).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IRC_MAX_TEXT_BYTES } from "../../../adapters/irc/format.js";
import { createIrcAdapter } from "../../../adapters/irc/index.js";
import { silentLogger } from "../../../core/logger.js";
import { ircUser, type PrivateIrcd, startNgircd } from "../../helpers/ngircd.js";
import type { PlatformDriver } from "../platform-adapter.contract.js";
import { memoryKv } from "./memory-kv.js";

let ircd: PrivateIrcd | undefined;
let n = 0;

export const ircDriver: PlatformDriver = {
  platform: "irc",
  abilities: { edit: false, deleteMessage: false, sendTyping: false, status: true },
  maxChars: IRC_MAX_TEXT_BYTES,
  length: (text) => Buffer.byteLength(text, "utf8"),
  errors: {
    // One line a second after the budget is used up: the next line waits 1 s.
    rateLimited: { code: "platform_rate_limited", retryAfterMs: 1000 },
    authFailed: { code: "platform_auth_failed" },
    notFound: { code: "platform_error" },
  },
  async beforeAll() {
    ircd = await startNgircd();
  },
  async afterAll() {
    await ircd?.stop();
  },
  async setup() {
    const server = ircd!;
    const id = ++n;
    const channel = `#contract${id}`;
    const nick = `herald${id}`;
    const alice = await ircUser(server, `alice${id}`);
    await alice.join(channel);
    const adapter = createIrcAdapter(
      {
        server: server.host,
        port: server.port,
        tls: false,
        nick,
        channels: [channel],
        sendBurst: 12,
        sendPerSecond: 1,
        maxSendWaitMs: 500,
        reconnectBaseMs: 200,
      },
      {
        logger: silentLogger(),
        homeDir: tmpdir(),
        cacheDir: mkdtempSync(join(tmpdir(), "herald-irc-")),
        kv: memoryKv(),
      },
    );
    return {
      adapter,
      chat: { platform: "irc", chatId: channel },
      ready: () => alice.waitFor((l) => l.command === "JOIN" && l.nick === nick).then(() => undefined),
      delivered: async () => {
        await alice.sync();
        return alice.messagesFrom(nick, channel).map((l) => ({ text: l.text }));
      },
      rateLimitNextSend: async () => {
        const lines = Array.from({ length: 12 }, (_, i) => `filler line ${i}`).join("\n");
        await adapter.send(
          { platform: "irc", chatId: alice.nick },
          { text: lines, idempotencyKey: `fill-${id}` },
        );
      },
      refuseAuthOnNextSend: async () => {
        alice.send(`MODE ${channel} +m`);
        await alice.waitFor(
          (l) => (l.command === "MODE" && l.text.includes("+m")) || l.raw.includes(`MODE ${channel} +m`),
        );
      },
      unknownChat: () => ({ platform: "irc", chatId: "nobody4711" }),
      close: async () => {
        await adapter.stop();
        alice.close();
      },
    };
  },
};
