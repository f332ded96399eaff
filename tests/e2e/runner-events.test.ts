/**
 * The runner's event stream and its three questions, on a whole gateway (real runner, queue, SQLite
 * state, agent loop, the scripted fake model) with a chat adapter at the PlatformAdapter boundary.
 */
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../core/logger.js";
import type { InboundMessage } from "../../core/types.js";
import { FakeChatAdapter } from "../fakes/chat/index.js";
import { type Harness, startHarness } from "../helpers/gateway-harness.js";
import { eventually } from "../helpers/herald-cluster.js";

let harness: Harness | undefined;
let chat: FakeChatAdapter;

afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

/** The gateway's log lines that are errors, as JSON. */
const errors: Record<string, unknown>[] = [];

async function start(): Promise<Harness> {
  errors.length = 0;
  const destination = new Writable({
    write(chunk, _encoding, done) {
      const line = JSON.parse(String(chunk)) as Record<string, unknown>;
      if (line.level === 50) errors.push(line);
      done();
    },
  });
  harness = await startHarness({
    logger: createLogger({ level: "error", destination }),
    env: { GATEWAY_ALLOWED_USERS: "fakechat:alice" },
    adapters: () => {
      chat = new FakeChatAdapter();
      return [chat];
    },
  });
  return harness;
}

describe("the runner's events", () => {
  it("tells each handler its own events once committed; a throwing handler stops neither the others nor the reply", async () => {
    const h = await start();
    const { runner } = h.gateway;
    const seen: string[] = [];
    const turns: string[] = [];
    runner.on("turn-started", () => {
      throw new Error("a broken handler");
    });
    runner.on("turn-started", ({ job }) => {
      seen.push("turn-started");
      turns.push(job.turnId);
    });
    const finished: { id: string; kind: string; journal: string | undefined }[] = [];
    runner.on("turn-finished", ({ turn, result }) => {
      seen.push("turn-finished");
      finished.push({ id: turn.id, kind: result.kind, journal: h.state.turns.get(turn.id)?.status });
    });
    runner.on("delivery-settled", ({ item, outcome }) => {
      if (item.turnId === turns[0]) seen.push(`delivery-settled:${outcome}`);
    });
    const ended: string[] = [];
    const stopHearing = runner.on("session-ended", ({ session }) => ended.push(session.reason));

    await chat.inject({ text: "hello" });
    expect(await chat.waitForTexts(1)).toEqual(["echo: hello"]);
    await eventually(
      () => seen.includes("delivery-settled:delivered"),
      () => `the delivery was not told: ${seen.join(", ")}`,
    );
    expect(seen.indexOf("turn-started")).toBeLessThan(seen.indexOf("turn-finished"));
    expect(seen.filter((t) => t === "turn-started")).toHaveLength(1);
    // Told once committed: the journal already has the result.
    expect(finished).toEqual([{ id: turns[0], kind: "ok", journal: "done" }]);
    expect(errors).toEqual([
      expect.objectContaining({ msg: "a runner event handler failed", event: "turn-started" }),
    ]);

    await chat.inject({ text: "/new" });
    await eventually(
      () => ended.length === 1,
      () => "the session end was not told",
    );
    expect(ended).toEqual(["manual"]);
    stopHearing();
    await chat.inject({ text: "/new" });
    await chat.waitForTexts(3);
    expect(ended).toEqual(["manual"]);
  });

  it("asks its hooks: /stop adds up the stoppers, /stop <id> takes the first answer, /status shows every line", async () => {
    const h = await start();
    const { runner } = h.gateway;
    const asked: string[] = [];
    runner.addStopper((key) => {
      asked.push(key);
      return 1;
    });
    runner.addStopper(() => 0);
    runner.addTaskStopper((id) => (id === "bg1" ? "stopped background task bg1" : undefined));
    runner.addTaskStopper((id) => (id === "bg1" ? "never: the first answer won" : `no task ${id} here`));
    const removeLine = runner.addStatusLine(() => "Extra: one");
    runner.addStatusLine(() => "Extra: two");

    await chat.inject({ text: "/stop" });
    await chat.inject({ text: "/stop bg1" });
    await chat.inject({ text: "/stop zz9" });
    await chat.inject({ text: "/status" });
    const texts = await chat.waitForTexts(4);
    expect(texts.slice(0, 3)).toEqual(["⏹ Stopped.", "stopped background task bg1", "no task zz9 here"]);
    expect(texts[3]).toContain("Extra: one\nExtra: two");
    expect(asked).toEqual([runner.keyOf(aliceSays(""))]);

    removeLine();
    await chat.inject({ text: "/status" });
    const status = (await chat.waitForTexts(5))[4];
    expect(status).not.toContain("Extra: one");
    expect(status).toContain("Extra: two");
  });
});

/** A message of Alice in the fake chat adapter's default chat. */
function aliceSays(text: string): InboundMessage {
  return {
    platform: "fakechat",
    messageId: "x",
    chat: { platform: "fakechat", chatId: "chat-1" },
    chatType: "dm",
    sender: { id: "alice", name: "Alice" },
    text,
    mentioned: true,
  };
}
