import { describe, expect, it } from "vitest";
import { configuredAccounts } from "../../app/config.js";
import { chatParser } from "../../app/platforms.js";
import { agentOfKey, sessionKey } from "../../core/chat.js";
import type { InboundMessage, KeyValueStore } from "../../core/types.js";
import { AgentRouter } from "../../gateway/index.js";
import { configHome } from "../helpers/config-home.js";

const { load, configError } = configHome("herald-agents-");

const accountsYaml = [
  "telegram:",
  "  allowed_users: ['111']",
  "  accounts:",
  "    - name: family",
  "      allowed_users: ['111', '222']",
].join("\n");

describe("bot accounts", () => {
  it("reads an account over the platform's section, its token from its own variable", () => {
    const config = load(accountsYaml, {
      TELEGRAM_BOT_TOKEN: "1:work",
      TELEGRAM_FAMILY_BOT_TOKEN: "2:family",
    });
    const [account] = configuredAccounts(config);
    expect(account?.name).toBe("telegram@family");
    expect(account?.section).toMatchObject({ botToken: "2:family", allowedUsers: ["111", "222"] });
    expect(config.platforms["telegram"]).toMatchObject({ botToken: "1:work", allowedUsers: ["111"] });
  });

  it("lets a worker (no adapters) read an account whose token is only in the gateway's environment", () => {
    const config = load(accountsYaml, {}, { adapters: false });
    expect(configuredAccounts(config).map((a) => a.name)).toEqual(["telegram@family"]);
  });

  it("refuses an account without its token, a bad name and a duplicate, naming the key", () => {
    expect(configError(accountsYaml).message).toMatch(/account 'family' of telegram lacks.*TELEGRAM_FAMILY_/);
    const bad = configError("telegram:\n  accounts:\n    - name: Family Bot\n", {
      TELEGRAM_BOT_TOKEN: "1:a",
    });
    expect(bad.key).toBe("telegram.accounts.0.name");
    const twice = configError(
      "telegram:\n  accounts:\n    - { name: a, bot_token: '2:a' }\n    - { name: a, bot_token: '3:a' }\n",
    );
    expect(twice.message).toMatch(/two accounts named 'a'/);
    const unknown = configError("telegram:\n  accounts:\n    - { name: a, bot_tokn: '2:a' }\n");
    expect(unknown.message).toMatch(/unknown key 'bot_tokn'/);
  });
});

describe("agents and routes", () => {
  it("refuses a route to no agent, an unknown platform or account, and an agent named default", () => {
    expect(configError("routes:\n  - agent: family\n").key).toBe("routes.0.agent");
    const platform = configError(
      "agents:\n  - name: family\nroutes:\n  - { agent: family, platform: telegramm }\n",
    );
    expect(platform.key).toBe("routes.0.platform");
    const account = configError(
      "agents:\n  - name: family\nroutes:\n  - { agent: family, platform: telegram@home }\n",
    );
    expect(account.message).toMatch(/telegram.accounts does not have/);
    expect(configError("agents:\n  - name: default\n").key).toBe("agents.0.name");
  });

  it("routes by account, chat, chat type and user, first match wins, a chat's choice over all", () => {
    const map = new Map<string, string>();
    const choices: KeyValueStore = {
      get: (k) => map.get(k),
      set: (k, v) => void map.set(k, v),
      delete: (k) => void map.delete(k),
    };
    const router = new AgentRouter({
      agents: ["family", "work"],
      routes: [
        { agent: "family", platform: "telegram@family" },
        { agent: "work", chat: "telegram:-100" },
        { agent: "work", user: "slack:U1" },
        { agent: "family", platform: "discord", chatType: "dm" },
      ],
      choices,
      parseChat: chatParser,
    });
    const msg = (platform: string, chatId: string, userId: string, chatType: "dm" | "group" = "dm") =>
      ({
        platform,
        messageId: "m",
        chat: { platform, chatId },
        chatType,
        sender: { id: userId },
        text: "hi",
        mentioned: true,
      }) satisfies InboundMessage;
    expect(router.agentOf(msg("telegram@family", "1", "1"))).toBe("family");
    expect(router.agentOf(msg("telegram", "1", "1"))).toBeUndefined();
    expect(router.agentOf(msg("telegram", "-100", "1", "group"))).toBe("work");
    expect(router.agentOf(msg("slack", "C1", "U1", "group"))).toBe("work");
    expect(router.agentOf(msg("discord", "5", "U1"))).toBe("family");
    expect(router.agentOf(msg("discord", "5", "U1", "group"))).toBeUndefined();
    // The API server and the web chat find sessions by the default agent's keys: never routed away.
    const everything = new AgentRouter({
      agents: ["work"],
      routes: [{ agent: "work" }],
      choices,
      parseChat: chatParser,
    });
    expect(everything.agentOf(msg("telegram", "2", "2"))).toBe("work");
    expect(everything.explain(msg("api", "s1", "api"))).toEqual({
      agent: "default",
      reason: { kind: "platform" },
    });
    everything.choose({ platform: "webchat", chatId: "w1" }, "work");
    expect(everything.agentOf(msg("webchat", "w1", "w1"))).toBeUndefined();
    router.choose({ platform: "telegram@family", chatId: "1" }, "default");
    expect(router.explain(msg("telegram@family", "1", "1"))).toEqual({
      agent: "default",
      reason: { kind: "choice" },
    });
  });

  it("keeps the default agent's session keys and prefixes the others'", () => {
    const parts = { chat: { platform: "telegram", chatId: "1" }, chatType: "dm" as const, userId: "1" };
    expect(sessionKey(parts)).toBe("telegram:dm:1");
    expect(sessionKey({ ...parts, agent: "family" })).toBe("family/telegram:dm:1");
    expect(agentOfKey("family/telegram:dm:1")).toBe("family");
    expect(agentOfKey("telegram:dm:1")).toBeUndefined();
    expect(agentOfKey("webchat:dm:a/b")).toBeUndefined();
  });
});
