/**
 * `herald setup --non-interactive` with the Ollama preset, against a fake Ollama server: the models
 * offered are the installed ones from its `/api/tags`; a name it has not installed is refused with the
 * list; a server with none installed says to pull one; nothing is written on a failure.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { type FakeOllama, startFakeOllama } from "../fakes/ollama/index.js";

const root = join(import.meta.dirname, "..", "..");
const cli = join(root, "app", "cli.ts");

let ollama: FakeOllama | undefined;
let home: string | undefined;
afterEach(async () => {
  await ollama?.close();
  ollama = undefined;
  if (home) rmSync(home, { recursive: true, force: true });
});

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

const ollamaArgs = (model: string) => [
  "--non-interactive",
  "--skip-doctor",
  "--model-provider",
  "ollama",
  "--model-url",
  ollama!.url,
  "--model",
  model,
];

describe("herald setup with the Ollama preset", () => {
  it("lists the installed models from /api/tags and writes the chosen one", async () => {
    ollama = await startFakeOllama(["qwen3:8b", "llama3.2:3b"]);
    home = mkdtempSync(join(tmpdir(), "herald-setup-ollama-"));
    writeFileSync(join(home, "config.yaml"), "timezone: UTC\n");
    const missing = await setup(ollamaArgs("mistral:7b"));
    expect(missing.code).toBe(1);
    expect(missing.out).toContain(
      "The endpoint does not serve the model 'mistral:7b'; it serves: qwen3:8b, llama3.2:3b.",
    );
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe("timezone: UTC\n");

    const run = await setup(ollamaArgs("llama3.2:3b"));
    expect(run.code, run.out).toBe(0);
    expect(run.out).toContain("2 model(s)");
    expect(ollama.paths).toContain("GET /api/tags");
    expect(ollama.paths).not.toContain("GET /v1/models");
    expect(ollama.paths).toContain("POST /v1/chat/completions");
    const config = parseYaml(readFileSync(join(home, "config.yaml"), "utf8")) as {
      model?: { base_url?: string; name?: string };
    };
    expect(config.model).toMatchObject({ base_url: ollama.url, name: "llama3.2:3b" });
  });

  it("says to pull a model when Ollama has none installed, and writes nothing", async () => {
    ollama = await startFakeOllama([]);
    home = mkdtempSync(join(tmpdir(), "herald-setup-ollama-"));
    const run = await setup(ollamaArgs("qwen3:8b"));
    expect(run.code).toBe(1);
    expect(run.out).toContain("Ollama has no model installed. Fix: pull one (`ollama pull qwen3:8b`)");
    expect(run.out).toContain("Nothing was written.");
    expect(() => statSync(join(home!, "config.yaml"))).toThrow();
  });
});
