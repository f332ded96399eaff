/**
 * `herald setup --non-interactive` as a script runs it: against the fake model, the fake Telegram and
 * the fake Discord, every credential checked live; the files it writes start a gateway that answers the
 * owner on Telegram; a re-run keeps what was there; a failed check writes nothing.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { loadConfig } from "../../app/config.js";
import { type Gateway, startGateway } from "../../app/gateway-main.js";
import { silentLogger } from "../../core/logger.js";
import { type FakeDiscord, startFakeDiscord } from "../fakes/discord/index.js";
import { type FakeLlm, startFakeLlm } from "../fakes/llm/index.js";
import { type FakeTelegram, startFakeTelegram } from "../fakes/telegram/index.js";
import { botReplies } from "./telegram-helpers.js";

const root = join(import.meta.dirname, "..", "..");
const cli = join(root, "app", "cli.ts");

let llm: FakeLlm | undefined;
let telegram: FakeTelegram | undefined;
let discord: FakeDiscord | undefined;
let gateway: Gateway | undefined;
let home: string | undefined;
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
  await Promise.all([llm?.close(), telegram?.close(), discord?.close()]);
  if (home) rmSync(home, { recursive: true, force: true });
});

/** Runs `herald setup` with these arguments; only HERALD_HOME and PATH from the environment. */
function setup(args: string[]): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", cli, "setup", ...args], {
    cwd: root,
    env: { HERALD_HOME: home!, PATH: process.env["PATH"] ?? "", HERALD_LOG_LEVEL: "silent" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const collect = (d: Buffer) => {
    out += d.toString();
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, out })));
}

async function fakes() {
  llm = await startFakeLlm({ apiKey: "sk-model-secret", models: ["fake-model", "other-model"] });
  telegram = await startFakeTelegram();
  discord = await startFakeDiscord();
  home = mkdtempSync(join(tmpdir(), "herald-setup-"));
}

const files = () => ({
  yaml: readFileSync(join(home!, "config.yaml"), "utf8"),
  env: readFileSync(join(home!, ".env"), "utf8"),
});

describe("herald setup --non-interactive", () => {
  it("checks each credential live, writes config.yaml and .env, and the gateway starts with them", async () => {
    await fakes();
    writeFileSync(join(home!, "config.yaml"), "# my notes: keep this\ntimezone: Europe/Berlin\n");
    writeFileSync(join(home!, ".env"), "# mine\nHERALD_EXEC_BACKEND=local\n");
    // The owner writes to the bot; setup reads the sender from getUpdates.
    telegram!.userSends({ chatId: 4242, fromId: 4242, text: "hi bot" });
    const run = await setup([
      "--non-interactive",
      "--skip-doctor",
      "--model-url",
      llm!.url,
      "--model-key",
      "sk-model-secret",
      "--model",
      "fake-model",
      "--telegram-token",
      telegram!.token,
      "--telegram-api-root",
      telegram!.url,
      "--telegram-wait-owner",
      "--owner-wait",
      "10",
      "--discord-token",
      discord!.token,
      "--discord-api-url",
      discord!.url,
      "--discord-owner",
      "80351110224678912",
    ]);
    expect(run.out).toContain("Telegram bot @herald_bot");
    expect(run.out).toMatch(/Discord bot \S+/);
    expect(run.out).toContain("telegram: 4242 is on the allowlist");
    expect(run.code).toBe(0);
    for (const secret of ["sk-model-secret", telegram!.token, discord!.token])
      expect(run.out).not.toContain(secret);

    const { yaml, env } = files();
    expect(yaml).toContain("# my notes: keep this");
    const config = parseYaml(yaml) as Record<string, Record<string, unknown>>;
    expect(config["timezone"]).toBe("Europe/Berlin");
    expect(config["model"]).toMatchObject({ base_url: llm!.url, name: "fake-model" });
    expect(config["telegram"]).toMatchObject({ api_root: telegram!.url, allowed_users: ["4242"] });
    expect(config["discord"]).toMatchObject({ api_url: discord!.url, allowed_users: ["80351110224678912"] });
    expect(yaml).not.toContain("sk-model-secret");
    expect(env).toContain("# mine\nHERALD_EXEC_BACKEND=local\n");
    expect(env).toContain("OPENAI_API_KEY=sk-model-secret\n");
    expect(env).toContain(`TELEGRAM_BOT_TOKEN=${telegram!.token}\n`);
    expect(env).toContain(`DISCORD_BOT_TOKEN=${discord!.token}\n`);
    expect(statSync(join(home!, ".env")).mode & 0o777).toBe(0o600);

    // The gateway starts from exactly these files, and answers the owner on Telegram.
    llm!.script({ text: "Configured and answering." });
    gateway = await startGateway(loadConfig({ env: { HERALD_HOME: home!, API_SERVER_PORT: "0" } }), {
      logger: silentLogger(),
    });
    expect([...gateway.adapters.keys()].sort()).toEqual(["api", "discord", "telegram"]);
    telegram!.userSends({ chatId: 4242, fromId: 4242, text: "are you there?" });
    expect(await botReplies(telegram!, 4242, 1)).toEqual(["Configured and answering."]);
    // The setup's "hi bot" was confirmed, not answered.
    expect(llm!.requests.flatMap((r) => r.messages.map((m) => m.content))).not.toContain("hi bot");
  });

  it("keeps existing settings on a re-run, and adds to the allowlist", async () => {
    await fakes();
    const first = await setup([
      "--non-interactive",
      "--skip-doctor",
      "--model-url",
      llm!.url,
      "--model-key",
      "sk-model-secret",
      "--telegram-token",
      telegram!.token,
      "--telegram-api-root",
      telegram!.url,
      "--telegram-owner",
      "111",
    ]);
    expect(first.code).toBe(0);
    // Second run: only another owner for Telegram; the token comes from .env and is checked again.
    const second = await setup([
      "--non-interactive",
      "--skip-doctor",
      "--platforms",
      "telegram",
      "--telegram-owner",
      "222",
    ]);
    expect(second.out).toContain("Telegram bot @herald_bot");
    expect(second.code).toBe(0);
    const { yaml, env } = files();
    const config = parseYaml(yaml) as Record<string, Record<string, unknown>>;
    expect(config["model"]).toMatchObject({ base_url: llm!.url, name: "fake-model" });
    expect(config["telegram"]).toMatchObject({ api_root: telegram!.url, allowed_users: ["111", "222"] });
    expect(env.match(/TELEGRAM_BOT_TOKEN=/g)).toHaveLength(1);
    expect(env).toContain("OPENAI_API_KEY=sk-model-secret");
  });

  it("writes nothing when a check fails, and says how to fix it", async () => {
    await fakes();
    writeFileSync(join(home!, "config.yaml"), "timezone: UTC\n");
    const run = await setup([
      "--non-interactive",
      "--model-url",
      llm!.url,
      "--model-key",
      "sk-model-secret",
      "--telegram-token",
      "123:wrong",
      "--telegram-api-root",
      telegram!.url,
    ]);
    expect(run.code).toBe(1);
    expect(run.out).toMatch(/Telegram answered 401 to getMe: the bot token is wrong or revoked.*@BotFather/);
    expect(run.out).toContain("Nothing was written.");
    expect(readFileSync(join(home!, "config.yaml"), "utf8")).toBe("timezone: UTC\n");
    expect(() => statSync(join(home!, ".env"))).toThrow();

    const badKey = await setup(["--non-interactive", "--model-url", llm!.url, "--model-key", "sk-wrong"]);
    expect(badKey.code).toBe(1);
    expect(badKey.out).toMatch(/answered 401: the API key was refused/);
    expect(badKey.out).not.toContain("sk-wrong");
  });
});
