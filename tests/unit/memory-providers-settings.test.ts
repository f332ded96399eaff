/**
 * `memory.providers` as an operator meets it: off by default (one doctor line saying how to turn it
 * on), on by its URL variable or section, a missing key named with its fix (never a value), and the
 * doctor's live check per provider against the fakes, a refused key included.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkMemoryProviders, configuredProviders } from "../../agent/tools/memory-providers/index.js";
import { loadConfig } from "../../app/config.js";
import { startFakeHoncho } from "../fakes/honcho/index.js";
import { startFakeMem0 } from "../fakes/mem0/index.js";

const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

function load(env: Record<string, string>, yaml?: string) {
  const home = mkdtempSync(join(tmpdir(), "herald-mp-"));
  homes.push(home);
  if (yaml) writeFileSync(join(home, "config.yaml"), yaml);
  return loadConfig({ env: { HERALD_HOME: home, ...env } });
}

describe("memory.providers settings", () => {
  it("is off by default, and says how to turn a provider on", async () => {
    const config = load({});
    expect(config.memory.providers.honcho).toBeUndefined();
    expect(config.memory.providers.mem0).toBeUndefined();
    expect(config.memory.memoryChars).toBe(2200);
    const lines = await checkMemoryProviders(config.memory.providers);
    expect(lines).toEqual([expect.objectContaining({ ok: true, text: expect.stringMatching(/none/) })]);
  });

  it("turns a provider on by its URL variable or its section, with the key from its variable", () => {
    const config = load(
      { HONCHO_URL: "http://127.0.0.1:9/", HONCHO_WORKSPACE_ID: "team", MY_MEM0: "secret-m" },
      "memory:\n  providers:\n    mem0:\n      api_key_env: MY_MEM0\n",
    );
    expect(config.memory.providers.honcho).toMatchObject({ workspace: "team", apiKey: undefined });
    expect(config.memory.providers.mem0).toMatchObject({
      baseUrl: "https://api.mem0.ai",
      apiKey: "secret-m",
    });
  });

  it("names the missing key's variable and the fix where the key is used (the gateway, the doctor)", async () => {
    // A worker loads the same settings without the key: it never calls a provider.
    const config = load({ MEM0_URL: "http://127.0.0.1:9" });
    expect(() => configuredProviders(config.memory.providers)).toThrow(
      /memory\.providers\.mem0 is set but MEM0_API_KEY is not\. Fix: add MEM0_API_KEY=/,
    );
    const [line] = await checkMemoryProviders(config.memory.providers);
    expect(line).toMatchObject({ ok: false, fix: expect.stringMatching(/^add MEM0_API_KEY=/) });
    // The hosted Honcho needs its key; a self-hosted one may run without.
    const hosted = load({}, "memory:\n  providers:\n    honcho: {}\n");
    expect(() => configuredProviders(hosted.memory.providers)).toThrow(/HONCHO_API_KEY is not/);
    const own = load({ HONCHO_URL: "http://127.0.0.1:9" });
    expect(configuredProviders(own.memory.providers).map((p) => p.name)).toEqual(["honcho"]);
  });

  it("checks each provider live in the doctor, and fails a refused key", async () => {
    const honcho = await startFakeHoncho({ apiKey: "hk" });
    const mem0 = await startFakeMem0({ apiKey: "mk" });
    try {
      const good = load({
        HONCHO_URL: honcho.url,
        HONCHO_API_KEY: "hk",
        MEM0_URL: mem0.url,
        MEM0_API_KEY: "mk",
      });
      const lines = await checkMemoryProviders(good.memory.providers);
      expect(lines.map((l) => [l.ok, l.text.split(" (")[0]])).toEqual([
        [true, "memory provider honcho: reachable, key accepted"],
        [true, "memory provider mem0: reachable, key accepted"],
      ]);
      const bad = load({
        HONCHO_URL: honcho.url,
        HONCHO_API_KEY: "nope",
        MEM0_URL: mem0.url,
        MEM0_API_KEY: "nope",
      });
      const refused = await checkMemoryProviders(bad.memory.providers);
      expect(refused.map((l) => l.ok)).toEqual([false, false]);
      for (const line of refused) {
        expect(line.text).toMatch(/answered 401 \(the API key was refused\)/);
        expect(line.text).not.toContain("nope");
        expect(line.fix).toMatch(/api_key_env/);
      }
    } finally {
      await honcho.close();
      await mem0.close();
    }
  });
});
