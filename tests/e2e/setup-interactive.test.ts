/**
 * The interactive `herald setup` as a person at a terminal meets it: the real @clack/prompts wizard in a
 * pseudo-terminal (util-linux `script`), keys typed as a user would, against the fake model and the
 * fake Telegram. And Ctrl-C half-way leaves both files exactly as they were.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { type FakeLlm, startFakeLlm } from "../fakes/llm/index.js";
import { type FakeTelegram, startFakeTelegram } from "../fakes/telegram/index.js";

const root = join(import.meta.dirname, "..", "..");
const cli = join(root, "app", "cli.ts");
const KEY = { down: "\u001b[B", enter: "\r", space: " ", ctrlC: "\u0003" };

let llm: FakeLlm | undefined;
let telegram: FakeTelegram | undefined;
let home: string | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  if (child?.exitCode === null && child.pid) process.kill(-child.pid, "SIGKILL");
  await Promise.all([llm?.close(), telegram?.close()]);
  if (home) rmSync(home, { recursive: true, force: true });
});

/** `herald setup` in a pseudo-terminal: `expect` waits for text on the screen, `type` sends keys. */
function terminal() {
  // A new pty is 0×0: give it a size, or every line wraps after one column.
  const command = `stty cols 160 rows 50; ${process.execPath} --import tsx ${cli} setup --skip-doctor`;
  child = spawn("script", ["-qfec", command, "/dev/null"], {
    cwd: root,
    env: { HERALD_HOME: home!, PATH: process.env["PATH"] ?? "", TERM: "xterm-256color", COLUMNS: "200" },
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  let screen = "";
  let seen = 0;
  const proc = child;
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  proc.stdout!.on("data", (d: Buffer) => {
    // Without colours and cursor moves, the text a user reads.
    screen += d.toString().replace(/\u001b\[[0-9;?]*[A-Za-z]/g, "");
  });
  return {
    exited,
    screen: () => screen,
    /** Waits for `text` to appear after what earlier calls matched. */
    async expect(text: string, timeoutMs = 20_000): Promise<void> {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const at = screen.indexOf(text, seen);
        if (at >= 0) {
          seen = at + text.length;
          // Give the prompt a moment to take the keyboard after it drew itself.
          await new Promise((r) => setTimeout(r, 150));
          return;
        }
        if (Date.now() > until)
          throw new Error(`'${text}' never appeared; the screen:\n${screen.slice(-3000)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async type(...keys: string[]): Promise<void> {
      for (const key of keys) {
        proc.stdin!.write(key);
        await new Promise((r) => setTimeout(r, 60));
      }
    },
  };
}

describe("herald setup in a terminal", () => {
  it("walks a user through the model and Telegram, reading their id from a message to the bot", async () => {
    llm = await startFakeLlm({ apiKey: "sk-typed-key" });
    telegram = await startFakeTelegram();
    home = mkdtempSync(join(tmpdir(), "herald-setup-tty-"));
    // A self-hosted Bot API server kept from an earlier setup (the wizard keeps and uses it).
    writeFileSync(join(home, "config.yaml"), `telegram:\n  api_root: ${telegram.url}\n`);
    const t = terminal();
    await t.expect("Which model provider?");
    await t.type(...Array<string>(6).fill(KEY.down), KEY.enter); // "Another OpenAI-compatible endpoint"
    await t.expect("Base URL of the OpenAI-compatible API");
    await t.type(llm.url, KEY.enter);
    await t.expect("API key");
    await t.type("sk-typed-key", KEY.enter);
    await t.expect("Which model?");
    await t.type(KEY.enter);
    await t.expect("Which platforms should Herald answer on?");
    await t.type(KEY.space, KEY.enter); // Telegram
    await t.expect("Bot token from @BotFather");
    await t.type(telegram.token, KEY.enter);
    await t.expect("Telegram bot @herald_bot");
    await t.expect("How?");
    await t.type(KEY.enter); // send a message now
    await t.expect("Send any message to @herald_bot now");
    telegram.userSends({
      chatId: 777,
      fromId: 777,
      text: "it's me",
      extra: { from: { id: 777, is_bot: false, first_name: "Ada" } },
    });
    await t.expect("Is Ada you?");
    await t.type(KEY.enter);
    await t.expect("Optional settings");
    await t.type(KEY.enter);
    await t.expect("Write config.yaml and .env?");
    await t.type(KEY.enter);
    expect(await t.exited).toBe(0);
    expect(t.screen()).toContain("Done.");
    expect(t.screen()).not.toContain("sk-typed-key"); // masked as typed

    const config = parseYaml(readFileSync(join(home, "config.yaml"), "utf8")) as Record<
      string,
      Record<string, unknown>
    >;
    expect(config["model"]).toMatchObject({ base_url: llm.url, name: "fake-model" });
    expect(config["telegram"]).toMatchObject({ api_root: telegram.url, allowed_users: ["777"] });
    const env = readFileSync(join(home, ".env"), "utf8");
    expect(env).toContain("OPENAI_API_KEY=sk-typed-key\n");
    expect(env).toContain(`TELEGRAM_BOT_TOKEN=${telegram.token}\n`);
    expect(statSync(join(home, ".env")).mode & 0o777).toBe(0o600);
  });

  it("Ctrl-C half-way leaves config.yaml and .env exactly as they were", async () => {
    llm = await startFakeLlm({ apiKey: "sk-new" });
    home = mkdtempSync(join(tmpdir(), "herald-setup-tty-"));
    const yaml = "# hand-written\nmodel:\n  name: old-model # keep\n";
    const env = "OPENAI_API_KEY=sk-old\n";
    writeFileSync(join(home, "config.yaml"), yaml);
    writeFileSync(join(home, ".env"), env, { mode: 0o600 });
    const t = terminal();
    await t.expect("Which model provider?");
    await t.type(...Array<string>(6).fill(KEY.down), KEY.enter);
    await t.expect("Base URL of the OpenAI-compatible API");
    await t.type(llm.url, KEY.enter);
    await t.expect("API key");
    await t.type("sk-new", KEY.enter);
    await t.expect("Which model?");
    await t.type(KEY.enter);
    await t.expect("Which platforms should Herald answer on?");
    await t.type(KEY.ctrlC);
    expect(await t.exited).toBe(130);
    expect(t.screen()).toContain("no file was changed");
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe(yaml);
    expect(readFileSync(join(home, ".env"), "utf8")).toBe(env);
  });

  it("Ctrl-C while waiting for the owner's message ends setup and writes nothing", async () => {
    llm = await startFakeLlm();
    telegram = await startFakeTelegram();
    home = mkdtempSync(join(tmpdir(), "herald-setup-tty-"));
    const yaml = `telegram:\n  api_root: ${telegram.url}\n`;
    writeFileSync(join(home, "config.yaml"), yaml);
    const t = terminal();
    await t.expect("Which model provider?");
    await t.type(...Array<string>(7).fill(KEY.down), KEY.enter); // skip the model
    await t.expect("Which platforms should Herald answer on?");
    await t.type(KEY.space, KEY.enter);
    await t.expect("Bot token from @BotFather");
    await t.type(telegram.token, KEY.enter);
    await t.expect("How?");
    await t.type(KEY.enter);
    await t.expect("Send any message to @herald_bot now");
    await t.type(KEY.ctrlC);
    expect(await t.exited).toBe(130);
    expect(t.screen()).toContain("no file was changed");
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe(yaml);
    expect(existsSync(join(home, ".env"))).toBe(false);
  });
});
