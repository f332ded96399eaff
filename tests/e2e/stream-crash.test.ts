/**
 * A real `herald gateway` process killed with SIGKILL while a reply streams into a Telegram chat: after
 * restart the turn runs again, writes into the same preview message, and the chat ends with exactly one
 * complete reply and no half message left behind.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type FakeLlm, startFakeLlm } from "../fakes/llm/index.js";
import {
  eventCallback,
  type FakeSlack,
  messageEvent,
  signedRequest,
  startFakeSlack,
} from "../fakes/slack/index.js";
import { type FakeTelegram, startFakeTelegram } from "../fakes/telegram/index.js";
import { freePort } from "../helpers/net.js";

const root = join(import.meta.dirname, "..", "..");
// One process (no tsx wrapper in between), so SIGKILL reaches the gateway itself.
const nodeArgs = ["--import", "tsx", join(root, "app", "cli.ts"), "gateway"];

let llm: FakeLlm | undefined;
let fake: FakeTelegram | undefined;
let slack: FakeSlack | undefined;
let child: ChildProcess | undefined;
let home: string | undefined;

afterEach(async () => {
  child?.kill("SIGKILL");
  await llm?.close();
  await fake?.close();
  await slack?.close();
  if (home) rmSync(home, { recursive: true, force: true });
  child = undefined;
  llm = undefined;
  fake = undefined;
  slack = undefined;
});

async function startGatewayProcess(env: Record<string, string>): Promise<ChildProcess> {
  const proc = spawn(process.execPath, nodeArgs, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const url = `http://127.0.0.1:${env["API_SERVER_PORT"]}/health`;
  for (let i = 0; i < 400; i++) {
    if (proc.exitCode !== null) throw new Error(`gateway exited early with ${proc.exitCode}`);
    try {
      if ((await fetch(url)).ok) return proc;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("gateway did not become ready");
}

const FIRST = `The first attempt: ${"this half will never be finished, ".repeat(8)}`;
const ANSWER = `Lisbon is the capital of **Portugal**. ${"It sits on seven hills by the Tagus. ".repeat(6).trim()}`;

describe("a streamed reply across a crash", () => {
  it("killed with SIGKILL mid-stream: after restart exactly one complete reply, no orphan preview", async () => {
    llm = await startFakeLlm();
    fake = await startFakeTelegram();
    home = mkdtempSync(join(tmpdir(), "herald-stream-crash-"));
    const env = {
      HERALD_HOME: home,
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "k",
      HERALD_MODEL: "fake-model",
      API_SERVER_PORT: String(await freePort()),
      HERALD_LOG_LEVEL: "silent",
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_API_ROOT: fake.url,
      TELEGRAM_ALLOWED_USERS: "111",
    };
    llm.script({ text: FIRST, pieces: 30, chunkDelayMs: 400 });
    child = await startGatewayProcess(env);
    fake.userSends({ chatId: 111, fromId: 111, text: "tell me about Lisbon" });
    // The preview is out and has been edited at least once: the reply is half written.
    await vi.waitFor(() => expect(fake!.callsTo("editMessageText", 111).length).toBeGreaterThanOrEqual(1), {
      timeout: 20_000,
    });
    child.kill("SIGKILL");
    await new Promise((r) => child!.once("exit", r));
    const half = fake.botMessages(111);
    expect(half).toHaveLength(1);
    expect(half[0]!.text).not.toBe(FIRST.trim());

    llm.script({ text: ANSWER, pieces: 8, chunkDelayMs: 300 });
    child = await startGatewayProcess(env);
    const final = ANSWER.replace(/\*\*/g, "");
    await vi.waitFor(() => expect(fake!.botMessages(111).map((m) => m.text)).toEqual([final]), {
      timeout: 30_000,
    });
    // The restarted turn wrote into the same message: no second post, nothing deleted or left behind.
    expect(fake.callsTo("sendMessage", 111)).toHaveLength(1);
    expect(fake.botMessages(111)[0]!.message_id).toBe(half[0]!.message_id);
    expect(llm.received()).toBe(2);
    // It stays that way (no late duplicate from the outbox).
    await new Promise((r) => setTimeout(r, 1500));
    expect(fake.botMessages(111).map((m) => m.text)).toEqual([final]);
    expect(fake.callsTo("sendMessage", 111)).toHaveLength(1);
  }, 90_000);

  it("the same through Slack: one message, updated to the complete reply after restart", async () => {
    llm = await startFakeLlm();
    slack = await startFakeSlack();
    home = mkdtempSync(join(tmpdir(), "herald-stream-crash-"));
    const port = String(await freePort());
    const secret = "8f742231b10e8888abcd99yyyzzz85a5";
    const env = {
      HERALD_HOME: home,
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "k",
      HERALD_MODEL: "fake-model",
      API_SERVER_PORT: port,
      HERALD_LOG_LEVEL: "silent",
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_SIGNING_SECRET: secret,
      SLACK_API_URL: slack.apiUrl,
      SLACK_ALLOWED_USERS: "U0ALICE01",
    };
    llm.script({ text: FIRST, pieces: 30, chunkDelayMs: 400 });
    child = await startGatewayProcess(env);
    const body = eventCallback(
      messageEvent({ channel: "D0ALICE01", ts: "1700000001.000100", text: "Lisbon?" }),
    );
    const url = `http://127.0.0.1:${port}/webhooks/slack/events`;
    expect((await fetch(signedRequest(body, { secret, url }))).status).toBe(200);
    await vi.waitFor(() => expect(slack!.callsOf("chat.update").length).toBeGreaterThanOrEqual(1), {
      timeout: 20_000,
    });
    child.kill("SIGKILL");
    await new Promise((r) => child!.once("exit", r));
    const [post] = slack.callsOf("chat.postMessage");
    const ts = String(slack.callsOf("chat.update")[0]!.args["ts"]);

    llm.script({ text: ANSWER, pieces: 8, chunkDelayMs: 300 });
    child = await startGatewayProcess(env);
    const final = ANSWER.replace("**Portugal**", "*Portugal*");
    await vi.waitFor(() => expect(slack!.callsOf("chat.update").at(-1)?.args["text"]).toBe(final), {
      timeout: 30_000,
    });
    // One message: the half-written post, updated in place by the re-run turn; nothing else posted.
    expect(post!.args["text"]).not.toBe(final);
    expect(slack.callsOf("chat.postMessage")).toHaveLength(1);
    expect(slack.callsOf("chat.update").every((c) => c.args["ts"] === ts)).toBe(true);
    expect(slack.callsOf("chat.delete")).toHaveLength(0);
    expect(llm.received()).toBe(2);
  }, 90_000);
});
