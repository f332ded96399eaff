/**
 * The Teams driver of the PlatformAdapter contract: the real adapter (botbuilder's CloudAdapter and
 * connector client) against the fake Teams (token endpoint and connector), which keeps the bot's
 * activities, so what a conversation shows is read from it (updates applied, deletions left out).
 * The connector client itself waits out three 429s; the fourth reaches the adapter.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TEAMS_MAX_CHARS } from "../../../adapters/teams/format.js";
import { createTeamsAdapter } from "../../../adapters/teams/index.js";
import { silentLogger } from "../../../core/logger.js";
import { APP_ID, APP_PASSWORD, startFakeTeams } from "../../fakes/teams/index.js";
import type { PlatformDriver } from "../platform-adapter.contract.js";
import { memoryKv } from "./memory-kv.js";

const CHANNEL = "19:contract0channel@thread.tacv2";

export const teamsDriver: PlatformDriver = {
  platform: "teams",
  abilities: { edit: true, deleteMessage: true, sendTyping: true, status: true },
  maxChars: TEAMS_MAX_CHARS,
  errors: {
    rateLimited: { code: "platform_rate_limited", retryAfterMs: 1000 },
    authFailed: { code: "platform_auth_failed" },
    notFound: { code: "platform_error" },
  },
  async setup() {
    const fake = await startFakeTeams();
    fake.addConversation(CHANNEL);
    const adapter = createTeamsAdapter(
      {
        appId: APP_ID,
        appPassword: APP_PASSWORD,
        openIdMetadataUrl: fake.openIdMetadataUrl,
        loginUrl: fake.loginUrl,
        serviceUrl: fake.serviceUrl,
      },
      {
        logger: silentLogger(),
        homeDir: tmpdir(),
        cacheDir: mkdtempSync(join(tmpdir(), "herald-teams-")),
        kv: memoryKv(),
      },
    );
    const all = () => fake.activities.filter((a) => a.conversationId === CHANNEL);
    return {
      adapter,
      chat: { platform: "teams", chatId: CHANNEL },
      delivered: () => fake.botMessagesIn(CHANNEL).map((a) => ({ id: a.id, text: fake.shown(a) })),
      currentText: (id) => {
        const a = all().find((x) => x.id === id);
        return a ? fake.shown(a) : undefined;
      },
      isDeleted: (id) => all().find((a) => a.id === id)?.deleted !== false,
      rateLimitNextSend: () =>
        fake.fault(
          "POST activities",
          {
            status: 429,
            body: { error: { code: "TooManyRequests", message: "Too many requests" } },
            headers: { "Retry-After": "1" },
          },
          4,
        ),
      refuseAuthOnNextSend: () =>
        fake.fault("POST activities", {
          status: 401,
          body: { message: "Authorization has been denied for this request." },
        }),
      unknownChat: () => ({ platform: "teams", chatId: "19:nosuchchannel@thread.tacv2" }),
      close: async () => {
        await adapter.stop();
        await fake.close();
      },
    };
  },
};
