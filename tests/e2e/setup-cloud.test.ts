/**
 * `herald setup --non-interactive` choosing a cloud sandbox: the key is checked live through Daytona's
 * SDK against the fake Daytona API and written to `.env` under its documented name only when it was
 * accepted; a refused key fails the run with the provider's answer and writes nothing.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { startFakeDaytona } from "../fakes/daytona/index.js";
import type { RunningFake } from "../fakes/sandbox-host/index.js";
import { nonInteractiveSetup } from "../helpers/setup-cli.js";

let fake: RunningFake & { apiUrl: string };
beforeAll(async () => {
  fake = await startFakeDaytona({ apiKey: "dtn_setup_key" });
});
afterAll(async () => {
  await fake?.stop();
});
const setup = nonInteractiveSetup("cloud");

describe("herald setup with a cloud sandbox", () => {
  it("checks the Daytona key live and keeps it with the backend and the API address", async () => {
    const run = await setup([
      "--exec-backend",
      "daytona",
      "--daytona-api-key",
      "dtn_setup_key",
      "--daytona-api-url",
      fake.apiUrl,
    ]);
    expect(run.out).toMatch(/the daytona API accepted the key/);
    expect(run.code).toBe(0);
    expect(readFileSync(join(run.home, ".env"), "utf8")).toMatch(/^DAYTONA_API_KEY=dtn_setup_key$/m);
    const config = parseYaml(readFileSync(join(run.home, "config.yaml"), "utf8")) as {
      exec: Record<string, unknown>;
    };
    expect(config.exec).toMatchObject({ backend: "daytona", daytona: { api_url: fake.apiUrl } });
    expect(fake.host.requests.some((r) => r.path === "/api/sandbox" && r.status === 200)).toBe(true);
  }, 120_000);

  it("a refused key fails the run with Daytona's answer and writes no key", async () => {
    const run = await setup([
      "--exec-backend",
      "daytona",
      "--daytona-api-key",
      "wrong",
      "--daytona-api-url",
      fake.apiUrl,
    ]);
    expect(run.code).not.toBe(0);
    expect(run.out).toMatch(/refused the key \(401\)/);
    const env = join(run.home, ".env");
    expect(existsSync(env) ? readFileSync(env, "utf8") : "").not.toContain("DAYTONA_API_KEY");
  }, 120_000);
});
