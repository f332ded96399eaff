/**
 * `herald setup --non-interactive` for Home Assistant: the toolset's address and token checked live
 * (`GET /api/` on the fake answers "API running."), the platform's webhook secret and owner written;
 * a refused token writes nothing and never prints the token.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { type FakeHomeAssistant, HA_TOKEN, startFakeHomeAssistant } from "../fakes/homeassistant/index.js";
import { nonInteractiveSetup } from "../helpers/setup-cli.js";

let fake: FakeHomeAssistant;
beforeAll(async () => {
  fake = await startFakeHomeAssistant();
});
afterAll(async () => {
  await fake?.close();
});

const setup = nonInteractiveSetup("ha");
const SECRET = "setup-webhook-secret-0123456789";

describe("herald setup for Home Assistant", () => {
  it("checks the token live and writes the address, the token, the webhook secret and the owner", async () => {
    const run = await setup([
      "--ha-url",
      `${fake.url}/`,
      "--ha-token",
      HA_TOKEN,
      "--homeassistant-webhook-secret",
      SECRET,
      "--homeassistant-owner",
      "homeassistant",
    ]);
    expect(run.out).toContain(`Home Assistant at ${fake.url}`);
    expect(run.out).toContain("/webhooks/homeassistant");
    expect(run.out).not.toContain(HA_TOKEN);
    expect(run.code).toBe(0);
    const config = parseYaml(readFileSync(join(run.home, "config.yaml"), "utf8")) as Record<
      string,
      Record<string, unknown>
    >;
    expect(config["ha"]).toEqual({ url: fake.url });
    expect(config["homeassistant"]).toMatchObject({ allowed_users: ["homeassistant"] });
    expect(JSON.stringify(config)).not.toContain(HA_TOKEN);
    const env = readFileSync(join(run.home, ".env"), "utf8");
    expect(env).toContain(`HOMEASSISTANT_TOKEN=${HA_TOKEN}`);
    expect(env).toContain(`HOMEASSISTANT_WEBHOOK_SECRET=${SECRET}`);
  });

  it("refuses a wrong token with the fix, and writes nothing", async () => {
    const run = await setup(["--ha-url", fake.url, "--ha-token", "not-the-token"]);
    expect(run.code).toBe(1);
    expect(run.out).toMatch(
      /Home Assistant answered 401 to GET \/api\/: the access token is wrong or revoked/,
    );
    expect(run.out).not.toContain("not-the-token");
    expect(existsSync(join(run.home, "config.yaml"))).toBe(false);
  });
});
