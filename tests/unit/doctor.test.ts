/** `herald doctor` checks for real: the model endpoint answers, the state file is writable. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { printDoctor, runDoctor } from "../../app/doctor.js";
import { startFakeAnthropic } from "../fakes/anthropic/index.js";
import { startFakeDiscord } from "../fakes/discord/index.js";
import { type FakeLlm, startFakeLlm } from "../fakes/llm/index.js";
import { startFakeSlack } from "../fakes/slack/index.js";
import { startFakeTelegram } from "../fakes/telegram/index.js";

let llm: FakeLlm | undefined;
let home: string | undefined;
afterEach(async () => {
  await llm?.close();
  if (home) rmSync(home, { recursive: true, force: true });
  llm = undefined;
});

function text(lines: Awaited<ReturnType<typeof runDoctor>>): { out: string; code: number } {
  let out = "";
  const sink = {
    write: (s: string) => {
      out += s;
      return true;
    },
  } as unknown as NodeJS.WritableStream;
  const code = printDoctor(lines, sink);
  return { out, code };
}

describe("herald doctor", () => {
  it("passes against a model endpoint that answers and a writable state file", async () => {
    llm = await startFakeLlm({ apiKey: "right" });
    home = mkdtempSync(join(tmpdir(), "herald-doctor-"));
    const { out, code } = text(
      await runDoctor({
        HERALD_HOME: home,
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "right",
        HERALD_MODEL: "fake-model",
      }),
    );
    expect(code).toBe(0);
    expect(out).toContain("model endpoint answered a request");
    expect(out).toContain("state file is writable");
    expect(llm.requests).toHaveLength(1);
  });

  it("lists the bot accounts and where an account on webhooks is served", async () => {
    llm = await startFakeLlm({ apiKey: "right" });
    home = mkdtempSync(join(tmpdir(), "herald-doctor-"));
    writeFileSync(join(home, "config.yaml"), "line:\n  accounts:\n    - name: shop\n");
    const { out } = text(
      await runDoctor({
        HERALD_HOME: home,
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "right",
        HERALD_MODEL: "fake-model",
        LINE_CHANNEL_SECRET: "main-secret",
        LINE_CHANNEL_ACCESS_TOKEN: "main-token",
        LINE_SHOP_CHANNEL_SECRET: "shop-secret",
        LINE_SHOP_CHANNEL_ACCESS_TOKEN: "shop-token",
      }),
    );
    expect(out).toContain("bot accounts: line@shop (one on webhooks is served at /webhooks/line@shop)");
    expect(out).not.toContain("shop-secret");
  });

  it("names the fix for a refused key and for an endpoint that is down, without printing the key", async () => {
    llm = await startFakeLlm({ apiKey: "right" });
    home = mkdtempSync(join(tmpdir(), "herald-doctor-"));
    const refused = text(
      await runDoctor({
        HERALD_HOME: home,
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "wrong-secret-key",
        HERALD_MODEL: "m",
      }),
    );
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/✗ model endpoint failed: HTTP 401\s+fix: check OPENAI_API_KEY/);
    expect(refused.out).not.toContain("wrong-secret-key");
    const down = text(
      await runDoctor({ HERALD_HOME: home, OPENAI_BASE_URL: "http://127.0.0.1:9/v1", OPENAI_API_KEY: "k" }),
    );
    expect(down.out).toMatch(/fix: check OPENAI_BASE_URL/);
  });

  it("probes the default model's provider with that provider's key, and names its env variable when refused", async () => {
    llm = await startFakeLlm({ apiKey: "provider-key" });
    home = mkdtempSync(join(tmpdir(), "herald-doctor-"));
    writeFileSync(
      join(home, "config.yaml"),
      `providers:\n  - name: remote\n    base_url: ${llm.url}\n    api_key_env: REMOTE_KEY\n    models:\n      - name: big\n`,
    );
    const ok = text(await runDoctor({ HERALD_HOME: home, REMOTE_KEY: "provider-key" }));
    expect(ok.out).toContain("model: remote/big at");
    expect(ok.out).toContain("providers: remote (1 model, key from REMOTE_KEY)");
    expect(ok.out).toContain("model endpoint answered a request (remote/big)");
    expect(llm.requests.map((r) => r.model)).toEqual(["big"]);
    const refused = text(await runDoctor({ HERALD_HOME: home, REMOTE_KEY: "revoked-secret" }));
    expect(refused.out).toMatch(/✗ model endpoint failed: HTTP 401\s+fix: check REMOTE_KEY/);
    expect(refused.out).not.toContain("revoked-secret");
  });

  it("asks a model of another protocol through that protocol, for one token", async () => {
    const claude = await startFakeAnthropic({ apiKey: "ant-key" });
    try {
      home = mkdtempSync(join(tmpdir(), "herald-doctor-"));
      writeFileSync(
        join(home, "config.yaml"),
        `providers:\n  - name: claude\n    api: anthropic\n    base_url: ${claude.url}\n    api_key_env: ANT_KEY\n    models:\n      - name: claude-test\n        reasoning: true\n`,
      );
      const ok = text(await runDoctor({ HERALD_HOME: home, ANT_KEY: "ant-key" }));
      expect(ok.out).toContain("✓ model endpoint answered a request (claude/claude-test, anthropic)");
      expect(claude.requests[0]).toMatchObject({ model: "claude-test", max_tokens: 1 });
      expect(claude.requests[0]).not.toHaveProperty("thinking");
      const refused = text(await runDoctor({ HERALD_HOME: home, ANT_KEY: "revoked-secret" }));
      expect(refused.out).toMatch(/✗ model endpoint failed \(anthropic\): HTTP 401\s+fix: .*check ANT_KEY/);
      expect(refused.out).not.toContain("revoked-secret");
    } finally {
      await claude.close();
    }
  });

  it("checks an agent's own exec backend beside exec.backend", async () => {
    llm = await startFakeLlm();
    home = mkdtempSync(join(tmpdir(), "herald-doctor-"));
    writeFileSync(join(home, "config.yaml"), "agents:\n  - name: family\n    exec_backend: local\n");
    const { out } = text(
      await runDoctor({ HERALD_HOME: home, OPENAI_BASE_URL: llm.url, HERALD_MODEL: "fake-model" }),
    );
    expect(out).toMatch(/agents family: terminal tools: commands run on this host, unsandboxed/);
  });

  it("reports a configuration error with its key", async () => {
    home = mkdtempSync(join(tmpdir(), "herald-doctor-"));
    const { out, code } = text(await runDoctor({ HERALD_HOME: home, API_SERVER_PORT: "port" }));
    expect(code).toBe(1);
    expect(out).toContain("API_SERVER_PORT");
  });

  it("marks the model ✗ with what to set when no model is configured", async () => {
    home = mkdtempSync(join(tmpdir(), "herald-doctor-"));
    const { out, code } = text(await runDoctor({ HERALD_HOME: home }));
    expect(code).toBe(1);
    expect(out).toMatch(
      /✗ model: gpt-4o-mini at https:\/\/api\.openai\.com\/v1, no key\s+fix: No model is configured/,
    );
    expect(out).toContain("herald setup");
    // No request to a model that cannot answer.
    expect(out).not.toContain("model endpoint");
  });

  it("accepts a local endpoint without a key", async () => {
    llm = await startFakeLlm();
    home = mkdtempSync(join(tmpdir(), "herald-doctor-"));
    const { out } = text(
      await runDoctor({ HERALD_HOME: home, OPENAI_BASE_URL: llm.url, HERALD_MODEL: "fake-model" }),
    );
    expect(out).toMatch(/✓ model: fake-model at http:\/\/127\.0\.0\.1:\d+\/v1, no key/);
    expect(out).toContain("✓ model endpoint answered a request");
  });

  it("says whether email senders are checked and whose Authentication-Results it trusts", async () => {
    home = mkdtempSync(join(tmpdir(), "herald-doctor-"));
    const email = {
      HERALD_HOME: home,
      EMAIL_ADDRESS: "bot@example.org",
      EMAIL_PASSWORD: "p",
      EMAIL_IMAP_HOST: "imap.example.org",
      EMAIL_SMTP_HOST: "smtp.example.org",
    };
    const pinned = text(await runDoctor({ ...email, EMAIL_TRUSTED_AUTHSERV_ID: "mx.example.org" }));
    expect(pinned.out).toContain(
      "✓ email sender check: on; trusts the topmost Authentication-Results header from mx.example.org",
    );
    const topmost = text(await runDoctor(email));
    expect(topmost.out).toMatch(
      /✓ email sender check: on; the topmost .* whoever wrote it.*\s+fix: set EMAIL_TRUSTED_AUTHSERV_ID/,
    );
    const off = text(await runDoctor({ ...email, EMAIL_VERIFY_SENDER: "false" }));
    expect(off.out).toMatch(/✗ email sender check: off .*\s+fix: remove EMAIL_VERIFY_SENDER=false/);
    const bad = text(await runDoctor({ ...email, EMAIL_TRUSTED_AUTHSERV_ID: "mx example" }));
    expect(bad.out).toContain(
      "EMAIL_TRUSTED_AUTHSERV_ID (config.yaml: email.trusted_authserv_id) is invalid",
    );
    expect(bad.out).toContain("e.g. mx.google.com");
  });

  it("checks each bot account's token as the platform's own (getMe on the fake Bot API) and lists the agents' routes", async () => {
    llm = await startFakeLlm({ apiKey: "right" });
    const work = await startFakeTelegram({ username: "quill_bot" });
    const family = await startFakeTelegram({ token: "7000000002:FAMILY-token", username: "hearth_bot" });
    home = mkdtempSync(join(tmpdir(), "herald-doctor-"));
    try {
      writeFileSync(
        join(home, "config.yaml"),
        [
          "telegram:",
          "  accounts:",
          "    - name: family",
          `      api_root: ${family.url}`,
          "    - name: old-bot",
          `      api_root: ${family.url}`,
          "agents:",
          "  - name: family",
          "  - name: spare",
          "routes:",
          "  - agent: family",
          "    platform: telegram@family",
          "  - agent: family",
          "    chat: telegram:-100123",
          "",
        ].join("\n"),
      );
      const { out, code } = text(
        await runDoctor({
          HERALD_HOME: home,
          OPENAI_BASE_URL: llm.url,
          OPENAI_API_KEY: "right",
          HERALD_MODEL: "m",
          TELEGRAM_BOT_TOKEN: work.token,
          TELEGRAM_API_ROOT: work.url,
          TELEGRAM_FAMILY_BOT_TOKEN: family.token,
          // A token the family bot's Bot API refuses: revoked.
          TELEGRAM_OLD_BOT_BOT_TOKEN: "7000000003:revoked-secret",
        }),
      );
      expect(out).toContain("✓ platforms: telegram (bot accounts: telegram@family, telegram@old-bot)");
      expect(out).toContain("✓ telegram: bot @quill_bot answered getMe (long polling)");
      expect(out).toContain("✓ telegram@family: bot @hearth_bot answered getMe (long polling)");
      expect(out).toMatch(
        /✗ telegram@old-bot: getMe failed\s+fix: Telegram answered 401 to getMe: the bot token is wrong or revoked\..* \(the token: TELEGRAM_OLD_BOT_BOT_TOKEN, or bot_token in the account\)/,
      );
      expect(out).not.toContain("revoked-secret");
      expect(code).toBe(1);
      expect(work.callsTo("getMe")).toHaveLength(1);
      // The account's own token reached the account's Bot API (the refused one is answered 401 unrecorded).
      expect(family.callsTo("getMe").map((c) => c.status)).toEqual([200]);
      expect(out).toContain(
        "✓ agents: default, family, spare; 2 route(s), first match wins, no match: default",
      );
      expect(out).toMatch(
        /✓ agent family: routes #1 platform telegram@family; #2 chat telegram:-100123; model the default, SOUL\.md .*agents\/family\/SOUL\.md missing/,
      );
      expect(out).toMatch(
        /✓ agent spare: no route leads to it; .*\s+fix: add a route \(routes: - agent: spare\) or switch a chat with \/agent spare/,
      );
    } finally {
      await work.close();
      await family.close();
    }
  });

  it("checks Discord's and Slack's tokens live, a Slack bot account's with its own variable", async () => {
    llm = await startFakeLlm({ apiKey: "right" });
    const discord = await startFakeDiscord();
    const slack = await startFakeSlack();
    home = mkdtempSync(join(tmpdir(), "herald-doctor-"));
    try {
      writeFileSync(join(home, "config.yaml"), "slack:\n  accounts:\n    - name: ops\n");
      const { out } = text(
        await runDoctor({
          HERALD_HOME: home,
          OPENAI_BASE_URL: llm.url,
          OPENAI_API_KEY: "right",
          HERALD_MODEL: "m",
          DISCORD_BOT_TOKEN: discord.token,
          DISCORD_API_URL: discord.url,
          SLACK_BOT_TOKEN: slack.botToken,
          SLACK_SIGNING_SECRET: "signing-secret",
          SLACK_API_URL: slack.apiUrl,
          SLACK_OPS_BOT_TOKEN: "xoxb-wrong-secret",
          // An account has its own signing secret (a Slack app of its own).
          SLACK_OPS_SIGNING_SECRET: "ops-signing-secret",
        }),
      );
      expect(out).toMatch(/✓ discord: bot \S+ answered \/users\/@me/);
      expect(out).toMatch(/✓ slack: bot \S+ of workspace \S+ answered auth\.test/);
      expect(out).toMatch(
        /✗ slack@ops: auth\.test failed\s+fix: Slack's auth\.test answered 'invalid_auth'.* \(the token: SLACK_OPS_BOT_TOKEN, or bot_token in the account\)/,
      );
      expect(out).not.toContain("xoxb-wrong-secret");
    } finally {
      await discord.close();
      await slack.close();
    }
  });
});
