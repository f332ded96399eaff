/**
 * The Slack driver of the PlatformAdapter contract: the real adapter (Bolt's WebClient) against the fake
 * Slack Web API. The fake records calls rather than a message store, so what a channel shows is read
 * from the calls it answered: `chat.postMessage` texts (faulted calls left out) and `chat.update`s.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SLACK_MAX_CHARS } from "../../../adapters/slack/format.js";
import { createSlackAdapter } from "../../../adapters/slack/index.js";
import { silentLogger } from "../../../core/logger.js";
import { SIGNING_SECRET } from "../../e2e/slack-helpers.js";
import { startFakeSlack } from "../../fakes/slack/index.js";
import type { PlatformDriver } from "../platform-adapter.contract.js";
import { memoryKv } from "./memory-kv.js";

export const slackDriver: PlatformDriver = {
  platform: "slack",
  abilities: { edit: true, deleteMessage: true, sendTyping: true, status: true },
  maxChars: SLACK_MAX_CHARS,
  errors: {
    rateLimited: { code: "platform_rate_limited", retryAfterMs: 7000 },
    authFailed: { code: "platform_auth_failed" },
    notFound: { code: "platform_error" },
  },
  async setup() {
    const fake = await startFakeSlack();
    const homeDir = await mkdtemp(join(tmpdir(), "herald-contract-slack-"));
    const adapter = createSlackAdapter(
      { botToken: fake.botToken, signingSecret: SIGNING_SECRET, apiUrl: fake.apiUrl },
      { logger: silentLogger(), homeDir, cacheDir: join(homeDir, "cache"), kv: memoryKv() },
    );
    const chatId = "C0GENERAL1";
    /** Indexes (among chat.postMessage calls) of the calls a fault answered. */
    const faulted = new Set<number>();
    const faultNextPost = () => faulted.add(fake.callsOf("chat.postMessage").length);
    return {
      adapter,
      chat: { platform: "slack", chatId },
      delivered: () =>
        fake
          .callsOf("chat.postMessage")
          .filter((c, i) => !faulted.has(i) && c.args["channel"] === chatId)
          .map((c) => ({ text: String(c.args["text"]) })),
      currentText: (id) => {
        const update = fake.callsOf("chat.update").findLast((c) => c.args["ts"] === id);
        return update === undefined ? undefined : String(update.args["text"]);
      },
      isDeleted: (id) => fake.callsOf("chat.delete").some((c) => c.args["ts"] === id),
      rateLimitNextSend: () => {
        faultNextPost();
        fake.inject("chat.postMessage", { kind: "rate_limit", retryAfterSec: 7 });
      },
      refuseAuthOnNextSend: () => {
        faultNextPost();
        fake.inject("chat.postMessage", { kind: "error", error: "invalid_auth" });
      },
      unknownChat: () => {
        faultNextPost();
        fake.inject("chat.postMessage", { kind: "error", error: "channel_not_found" });
        return { platform: "slack", chatId: "C0NOSUCH01" };
      },
      async close() {
        await adapter.stop();
        await fake.close();
        await rm(homeDir, { recursive: true, force: true });
      },
    };
  },
};
