/**
 * WhatsApp through the whole gateway: the adapter with a fake socket (real Baileys event buffer), the
 * real runner, SQLite state, agent loop and the scripted fake model. WHATSAPP_ENABLED stays unset: the
 * test builds the adapter itself and hands it to the harness.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { WAMessage } from "@whiskeysockets/baileys";
import { afterEach, describe, expect, it } from "vitest";
import { createWhatsAppAdapter, type WhatsAppAdapter } from "../../adapters/whatsapp/index.js";
import { whatsappPlatform } from "../../adapters/whatsapp/module.js";
import { loadConfig, sectionOf } from "../../app/config.js";
import { silentLogger } from "../../core/logger.js";
import { FakeWhatsApp, fixture, seedLinkedCreds, withId, withText } from "../fakes/whatsapp/index.js";
import { type Harness, startHarness } from "../helpers/gateway-harness.js";
import { MemoryKv } from "./whatsapp-env.js";

let harness: Harness | undefined;
let home: string | undefined;
let fake: FakeWhatsApp;
let adapter: WhatsAppAdapter;
let qrs: string[];

afterEach(async () => {
  await harness?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
  harness = undefined;
  home = undefined;
});

async function start(options: { linked?: boolean; env?: Record<string, string> } = {}): Promise<Harness> {
  home = mkdtempSync(join(tmpdir(), "herald-wa-gw-"));
  if (options.linked ?? true) await seedLinkedCreds(join(home, "whatsapp"));
  fake = new FakeWhatsApp();
  qrs = [];
  const env = {
    HERALD_HOME: home,
    // Phone numbers in both spellings users write them: with + and as a JID.
    WHATSAPP_ALLOWED_USERS: "+15551234567,15557654321@s.whatsapp.net",
    ...options.env,
  };
  const dir = home;
  harness = await startHarness({
    env,
    adapters: () => {
      adapter = createWhatsAppAdapter(
        sectionOf(loadConfig({ env }), whatsappPlatform),
        { logger: silentLogger(), homeDir: dir, cacheDir: join(dir, "cache"), kv: new MemoryKv() },
        { socketFactory: fake.factory, onQr: (qr) => qrs.push(qr), backoff: { baseMs: 20, maxMs: 200 } },
      );
      return [adapter];
    },
  });
  return harness;
}

const running = () => fake.waitFor(() => adapter.status().state === "running", "WhatsApp to be connected");

/** Delivers `messages`, then a marker DM, and returns the texts sent until the marker was answered. */
async function deliverThenMarker(
  messages: WAMessage[],
  type: "notify" | "append" = "notify",
): Promise<string[]> {
  const before = fake.texts().length;
  fake.current.deliver(messages, type);
  // From another allowed contact: a new message in the same DM would interrupt a turn still running there.
  const marker = withText(withId(fixture("dm-text"), `3EB0MARKER${before}`), "marker");
  marker.key = { ...marker.key, remoteJid: "15557654321@s.whatsapp.net", remoteJidAlt: undefined };
  fake.current.deliver(marker);
  await fake.waitFor(() => fake.texts().includes("echo: marker"), "the marker's answer");
  await harness!.gateway.runner.outbox.idle();
  return fake.texts().slice(before);
}

describe("WhatsApp through the gateway", () => {
  it("answers an allowed DM: composing while it works, read receipt, plain reply (no quote)", async () => {
    const h = await start();
    await running();
    fake.current.deliver(fixture("dm-text"));
    expect(await fake.waitForTexts(1)).toEqual(["echo: Hello Herald!"]);
    const [reply] = fake.sent();
    expect(reply?.jid).toBe("15551234567@s.whatsapp.net");
    expect(reply?.options?.quoted).toBeUndefined();
    expect(fake.current.presence).toContainEqual({ type: "composing", jid: "15551234567@s.whatsapp.net" });
    expect(fake.current.reads.map((k) => k.id)).toEqual(["3EB0A1B2C3D4E5F60718"]);
    expect(h.llm.requests).toHaveLength(1);
  });

  it("ignores group chatter without a mention; answers a mention quoting the message", async () => {
    const h = await start();
    await running();
    fake.current.deliver(fixture("group-chatter"));
    fake.current.deliver(fixture("group-mention"));
    expect(await fake.waitForTexts(1)).toEqual(["echo: what is the capital of France?"]);
    await h.gateway.runner.outbox.idle();
    expect(h.llm.requests).toHaveLength(1);
    const [reply] = fake.sent();
    expect(reply?.jid).toBe("120363041234567890@g.us");
    expect(reply?.options?.quoted?.key).toMatchObject({ id: "3EB0C0FFEE9876543210" });
    // A reply to the bot's message counts as addressing it.
    fake.current.deliver(fixture("group-reply-to-bot"));
    expect((await fake.waitForTexts(2))[1]).toBe("echo: and of Germany?");
  });

  it("never turns a history-sync batch into turns", async () => {
    const h = await start();
    await running();
    const history = ["group-mention", "dm-lid", "dm-ephemeral"].map(fixture);
    expect(await deliverThenMarker(history, "append")).toEqual(["echo: marker"]);
    expect(h.llm.requests).toHaveLength(1);
  });

  it("answers a message delivered twice once", async () => {
    const h = await start();
    await running();
    fake.current.deliver(fixture("dm-text"));
    await deliverThenMarker([fixture("dm-text")]);
    await fake.waitForTexts(2);
    expect(fake.texts().sort()).toEqual(["echo: Hello Herald!", "echo: marker"]);
    expect(h.llm.requests).toHaveLength(2);
  });

  it("gives an unknown DM sender a pairing code in WhatsApp formatting, and no model call", async () => {
    const h = await start();
    await running();
    const stranger = fixture("dm-text");
    stranger.key = {
      ...stranger.key,
      remoteJid: "4915112345678@s.whatsapp.net",
      remoteJidAlt: undefined,
      id: "3EB0STRANGER00000001",
    };
    fake.current.deliver(stranger);
    const [notice] = await fake.waitForTexts(1);
    expect(notice).toMatch(/pairing code is \*[A-Z0-9]{8}\*/);
    expect(notice).toContain("`herald pairing approve");
    expect(h.llm.requests).toHaveLength(0);
  });

  it("renders the model's Markdown in WhatsApp's format and splits a long reply", async () => {
    const h = await start();
    await running();
    h.llm.script({
      text: "**Paris** is the _capital_ of ~~Germany~~ France. See [this](https://example.com).",
    });
    fake.current.deliver(fixture("dm-text"));
    expect(await fake.waitForTexts(1)).toEqual([
      "*Paris* is the _capital_ of ~Germany~ France. See this (https://example.com).",
    ]);
    const long = Array.from({ length: 9 }, (_, i) => `Section ${i}: ${"detail ".repeat(140).trim()}`).join(
      "\n\n",
    );
    h.llm.script({ text: long });
    fake.current.deliver(withId(fixture("dm-text"), "3EB0LONG000000000001"));
    await h.gateway.runner.outbox.idle();
    const chunks = await fake.waitForTexts(4);
    expect(chunks.length).toBe(4);
    for (const c of chunks.slice(1)) expect(c.length).toBeLessThanOrEqual(4000);
    expect(chunks.slice(1).join("\n\n")).toBe(long);
  });

  it("reconnects once after a transient close and answers on the new socket", async () => {
    const h = await start();
    await running();
    await fake.current.drop(428);
    await fake.waitForSockets(2);
    await running();
    fake.current.deliver(fixture("dm-text"));
    expect(await fake.waitForTexts(1)).toEqual(["echo: Hello Herald!"]);
    expect(fake.sent()[0]?.socket).toBe(1);
    await h.gateway.runner.outbox.idle();
    expect(fake.sockets).toHaveLength(2);
  });

  it("after a logged-out close does not reconnect and /health says how to relink", async () => {
    const h = await start();
    await running();
    await fake.current.drop(401);
    await new Promise((r) => setTimeout(r, 200));
    expect(fake.sockets).toHaveLength(1);
    const health = (await (await fetch(`${h.apiUrl}/health`)).json()) as {
      adapters: Record<string, { state: string; detail?: string }>;
    };
    expect(health.adapters["whatsapp"]?.state).toBe("failed");
    expect(health.adapters["whatsapp"]?.detail).toMatch(/logged this device out.*`herald whatsapp link`/);
  });

  it("stays linked across a restart: QR once, then the saved credentials", async () => {
    const h = await start({ linked: false });
    expect(qrs).toHaveLength(1);
    expect(h.llm.requests).toHaveLength(0);
    await fake.current.scan();
    await running();
    await h.restart();
    await running();
    expect(qrs).toHaveLength(1);
    fake.current.deliver(fixture("dm-text"));
    expect(await fake.waitForTexts(1)).toEqual(["echo: Hello Herald!"]);
    expect(fake.sockets).toHaveLength(3);
  });

  it("a gateway killed mid-turn answers exactly once after it starts again", async () => {
    const h = await start();
    await running();
    h.llm.script({ text: "first attempt", delayMs: 20_000 });
    fake.current.deliver(fixture("dm-text"));
    await h.llm.waitForRequests(1);
    await h.crash();
    h.llm.script({ text: "the answer" });
    await h.start();
    await running();
    expect(await fake.waitForTexts(1)).toEqual(["the answer"]);
    await h.restart();
    await running();
    await h.gateway.runner.outbox.idle();
    expect(fake.texts()).toEqual(["the answer"]);
  });
});
