/**
 * Configuration: config.yaml, then HERALD_HOME/.env, then the environment (later wins), and errors that
 * name the key and the fix.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../app/config.js";
import { ConfigError } from "../../core/errors.js";

let home: string | undefined;
afterEach(() => {
  if (home) rmSync(home, { recursive: true, force: true });
  home = undefined;
});

function withHome(files: { yaml?: string; dotenv?: string } = {}): string {
  home = mkdtempSync(join(tmpdir(), "herald-config-"));
  if (files.yaml !== undefined) writeFileSync(join(home, "config.yaml"), files.yaml);
  if (files.dotenv !== undefined) writeFileSync(join(home, ".env"), files.dotenv);
  return home;
}

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig({ env });
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("expected a ConfigError");
}

describe("loadConfig", () => {
  it("applies defaults on an empty HERALD_HOME", () => {
    const config = loadConfig({ env: { HERALD_HOME: withHome() } });
    expect(config.apiServer).toMatchObject({ enabled: true, host: "127.0.0.1", port: 8642 });
    expect(config.sessions).toMatchObject({ busyPolicy: "interrupt", groupSessions: "per_user" });
    expect(config.sessions.reset).toEqual({ mode: "idle", idleMinutes: 1440, atHour: 4 });
    expect(config.model.maxIterations).toBe(90);
    expect(config.access.allowAllUsers).toBe(false);
  });

  it("reads snake_case config.yaml, lets .env override it and the environment override both", () => {
    const dir = withHome({
      yaml: "model:\n  name: from-yaml\n  context_tokens: 32000\ntelegram:\n  require_mention: false\n",
      dotenv: "HERALD_MODEL=from-dotenv\nAPI_SERVER_PORT=9000\n",
    });
    const config = loadConfig({ env: { HERALD_HOME: dir, API_SERVER_PORT: "9100" } });
    expect(config.model.name).toBe("from-dotenv");
    expect(config.model.contextTokens).toBe(32000);
    expect(config.platforms["telegram"]?.requireMention).toBe(false);
    expect(config.apiServer.port).toBe(9100);
  });

  it("parses lists and booleans from the environment", () => {
    const config = loadConfig({
      env: {
        HERALD_HOME: withHome(),
        GATEWAY_ALLOWED_USERS: " telegram:1, discord:2 ,",
        GATEWAY_ALLOW_ALL_USERS: "yes",
      },
    });
    expect(config.access.allowedUsers).toEqual(["telegram:1", "discord:2"]);
    expect(config.access.allowAllUsers).toBe(true);
  });

  it("names the env key and the fix for a bad value", () => {
    const err = configError({ HERALD_HOME: withHome(), TELEGRAM_REQUIRE_MENTION: "maybe" });
    expect(err.key).toBe("TELEGRAM_REQUIRE_MENTION");
    expect(err.message).toMatch(/TELEGRAM_REQUIRE_MENTION must be true or false, got 'maybe'/);
    expect(err.message).toMatch(/Fix:/);
  });

  it("names both the env variable and the config.yaml path of an invalid value", () => {
    const err = configError({ HERALD_HOME: withHome(), HERALD_RESET_MODE: "weekly" });
    expect(err.message).toContain("HERALD_RESET_MODE (config.yaml: sessions.reset.mode)");
  });

  it("refuses an unknown config.yaml key, naming it", () => {
    const err = configError({ HERALD_HOME: withHome({ yaml: "telegrm:\n  bot_token: x\n" }) });
    expect(err.key).toBe("telegrm");
    expect(err.message).toMatch(/unknown key 'telegrm'/);
  });

  it("refuses an API server off loopback without a key", () => {
    const err = configError({ HERALD_HOME: withHome(), API_SERVER_HOST: "0.0.0.0" });
    expect(err.key).toBe("API_SERVER_KEY");
    expect(err.message).toMatch(/set API_SERVER_KEY/);
    expect(() =>
      loadConfig({
        env: { HERALD_HOME: withHome(), API_SERVER_HOST: "0.0.0.0", API_SERVER_KEY: "k".repeat(32) },
      }),
    ).not.toThrow();
  });

  it("refuses an API server on a host that only starts like loopback", () => {
    expect(configError({ HERALD_HOME: withHome(), API_SERVER_HOST: "127.0.0.1.nip.io" }).key).toBe(
      "API_SERVER_KEY",
    );
  });

  it("reads API_SERVER_CORS_ORIGINS as a list of origins and refuses anything else, naming it", () => {
    const dir = withHome();
    const config = loadConfig({
      env: { HERALD_HOME: dir, API_SERVER_CORS_ORIGINS: "http://localhost:3000,https://app.example" },
    });
    expect(config.apiServer.corsOrigins).toEqual(["http://localhost:3000", "https://app.example"]);
    for (const bad of ["*", "http://localhost:3000/", "app.example", "https://app.example/path"]) {
      const err = configError({ HERALD_HOME: dir, API_SERVER_CORS_ORIGINS: bad });
      expect(err.key).toBe("API_SERVER_CORS_ORIGINS");
      expect(err.message).toContain("API_SERVER_CORS_ORIGINS (config.yaml: api_server.cors_origins)");
      expect(err.message).toMatch(/is not an origin: write scheme:\/\/host\[:port\]/);
    }
  });

  it("checks cross-field settings: time zone, Slack transport, email servers, Redis URL", () => {
    expect(configError({ HERALD_HOME: withHome(), HERALD_TIMEZONE: "Mars/Olympus" }).key).toBe(
      "HERALD_TIMEZONE",
    );
    expect(configError({ HERALD_HOME: withHome(), SLACK_BOT_TOKEN: "xoxb-test" }).key).toBe(
      "SLACK_SIGNING_SECRET",
    );
    expect(
      configError({ HERALD_HOME: withHome(), EMAIL_ADDRESS: "bot@example.org", EMAIL_PASSWORD: "p" }).key,
    ).toBe("EMAIL_IMAP_HOST");
    expect(configError({ HERALD_HOME: withHome(), REDIS_URL: "localhost:6379" }).key).toBe("REDIS_URL");
  });

  it("reports invalid YAML with the file", () => {
    const err = configError({ HERALD_HOME: withHome({ yaml: "model: [unclosed\n" }) });
    expect(err.key).toBe("config.yaml");
    expect(err.message).toContain("config.yaml is not valid YAML");
  });
});
