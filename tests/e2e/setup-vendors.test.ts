/**
 * `herald setup --non-interactive` with Anthropic, Gemini and Bedrock, against their fake APIs: the key
 * is checked live (the vendor's models listed, the chosen one asked for a token), the provider is
 * written with its `api:` and the key under the vendor's own variable, and the config then loads with
 * that model as the default. A refused key or unknown model writes nothing.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { loadConfig } from "../../app/config.js";
import { startFakeAnthropic } from "../fakes/anthropic/index.js";
import { startFakeBedrock } from "../fakes/bedrock/index.js";
import { startFakeGemini } from "../fakes/gemini/index.js";

const root = join(import.meta.dirname, "..", "..");
const cli = join(root, "app", "cli.ts");

const closers: (() => Promise<void>)[] = [];
let home = "";
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  if (home) rmSync(home, { recursive: true, force: true });
});

function newHome(): string {
  home = mkdtempSync(join(tmpdir(), "herald-setup-vendor-"));
  writeFileSync(join(home, "config.yaml"), "timezone: UTC\n");
  return home;
}

function setup(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; out: string }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", cli, "setup", "--non-interactive", "--skip-doctor", ...args],
    {
      cwd: root,
      env: { HERALD_HOME: home, PATH: process.env["PATH"] ?? "", HERALD_LOG_LEVEL: "silent", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  const collect = (d: Buffer) => {
    out += d.toString();
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, out })));
}

const written = () => parseYaml(readFileSync(join(home, "config.yaml"), "utf8")) as Record<string, unknown>;
const envFile = () => readFileSync(join(home, ".env"), "utf8");

describe("herald setup with a vendor spoken natively", { timeout: 180_000 }, () => {
  it("Anthropic: checks the key live, writes the provider and the key, and the config loads", async () => {
    const fake = await startFakeAnthropic({ apiKey: "sk-ant-good" });
    closers.push(fake.close);
    newHome();
    const args = ["--model-provider", "anthropic", "--model-url", fake.url, "--model", "claude-sonnet-4-5"];

    const refused = await setup([...args, "--model-key", "sk-ant-wrong"]);
    expect(refused.code).toBe(1);
    expect(refused.out).toContain("Anthropic answered 401: the API key was refused");
    expect(refused.out).not.toContain("sk-ant-wrong");
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe("timezone: UTC\n");

    // The key from ANTHROPIC_API_KEY, as a script or container gives it.
    const run = await setup(args, { ANTHROPIC_API_KEY: "sk-ant-good" });
    expect(run.code, run.out).toBe(0);
    expect(run.out).toContain("Anthropic (Claude) answered: 2 model(s)");
    expect(run.out).toContain("claude-sonnet-4-5 answered");
    expect(fake.requests.at(-1)).toMatchObject({ model: "claude-sonnet-4-5", max_tokens: 1 });
    expect(written()).toMatchObject({
      providers: [
        { name: "anthropic", api: "anthropic", base_url: fake.url, api_key_env: "ANTHROPIC_API_KEY" },
      ],
      model: { default: "anthropic/claude-sonnet-4-5" },
    });
    expect(envFile()).toContain("ANTHROPIC_API_KEY=sk-ant-good");
    const config = loadConfig({ env: { HERALD_HOME: home } });
    expect(config.model.default).toBe("anthropic/claude-sonnet-4-5");
    expect(config.providers[0]).toMatchObject({ api: "anthropic", baseUrl: fake.url, apiKey: "sk-ant-good" });
  });

  it("Gemini: offers only the models that generate content and refuses another name", async () => {
    const fake = await startFakeGemini({ apiKey: "gm-good" });
    closers.push(fake.close);
    newHome();
    const args = ["--model-provider", "gemini", "--model-url", fake.url, "--model-key", "gm-good"];
    const embedding = await setup([...args, "--model", "text-embedding-004"]);
    expect(embedding.code).toBe(1);
    expect(embedding.out).toContain("it serves: gemini-2.5-flash, gemini-2.5-pro.");

    const badKey = await setup([
      "--model-provider",
      "gemini",
      "--model-url",
      fake.url,
      "--model-key",
      "nope",
    ]);
    expect(badKey.code).toBe(1);
    expect(badKey.out).toContain("Gemini answered 400: the API key was refused");

    const run = await setup([...args, "--model", "gemini-2.5-pro"]);
    expect(run.code, run.out).toBe(0);
    expect(written()).toMatchObject({
      providers: [{ name: "gemini", api: "gemini", api_key_env: "GEMINI_API_KEY" }],
      model: { default: "gemini/gemini-2.5-pro" },
    });
    expect(envFile()).toContain("GEMINI_API_KEY=gm-good");
  });

  it("Bedrock: asks the model with the environment's AWS credentials, and says when there are none", async () => {
    const fake = await startFakeBedrock({ accessKeyId: "AKIDSETUP" });
    closers.push(fake.close);
    newHome();
    const args = ["--model-provider", "bedrock", "--model-url", fake.url, "--model-region", "eu-west-1"];
    const model = ["--model", "anthropic.claude-3-5-haiku-20241022-v1:0"];

    const none = await setup([...args, ...model], {
      AWS_SHARED_CREDENTIALS_FILE: join(home, "none"),
      AWS_CONFIG_FILE: join(home, "none"),
    });
    expect(none.code).toBe(1);
    expect(none.out).toContain("No AWS credentials found. Fix: set AWS_ACCESS_KEY_ID");

    const creds = { AWS_ACCESS_KEY_ID: "AKIDSETUP", AWS_SECRET_ACCESS_KEY: "secret" };
    const noModel = await setup(args, creds);
    expect(noModel.code).toBe(1);
    expect(noModel.out).toContain("No model: give --model");

    const run = await setup([...args, ...model], creds);
    expect(run.code, run.out).toBe(0);
    expect(fake.requests.at(-1)).toMatchObject({ modelId: "anthropic.claude-3-5-haiku-20241022-v1:0" });
    expect(written()).toMatchObject({
      providers: [{ name: "bedrock", api: "bedrock", base_url: fake.url }],
      model: { default: "bedrock/anthropic.claude-3-5-haiku-20241022-v1:0" },
    });
    expect(JSON.stringify(written())).not.toContain("AKIDSETUP");
  });
});
