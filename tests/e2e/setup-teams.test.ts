/**
 * `herald setup --non-interactive` for Teams: the app id and secret checked live (a client-credentials
 * sign-in at the fake login endpoint), the app id and tenant written to config.yaml, the secret to .env;
 * a wrong secret writes nothing.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { APP_ID, APP_PASSWORD, type FakeTeams, startFakeTeams, TENANT_ID } from "../fakes/teams/index.js";
import { nonInteractiveSetup } from "../helpers/setup-cli.js";

let fake: FakeTeams;
beforeAll(async () => {
  fake = await startFakeTeams();
});
afterAll(async () => {
  await fake?.close();
});

const setup = nonInteractiveSetup("teams");

describe("herald setup for Teams", () => {
  it("signs in live and writes the app id, tenant, login URL and owner; the secret goes to .env", async () => {
    const owner = "aaaaaaaa-0000-4000-8000-000000000001";
    const run = await setup([
      "--teams-app-id",
      APP_ID,
      "--teams-app-password",
      APP_PASSWORD,
      "--teams-tenant-id",
      TENANT_ID,
      "--teams-login-url",
      fake.loginUrl,
      "--teams-owner",
      owner,
    ]);
    expect(run.out).toContain("Azure Bot");
    expect(run.out).toContain(`Teams app ${APP_ID}`);
    expect(run.out).not.toContain(APP_PASSWORD);
    expect(run.code).toBe(0);
    expect(fake.calls.some((c) => c.path === `/${TENANT_ID}/oauth2/v2.0/token`)).toBe(true);
    const config = parseYaml(readFileSync(join(run.home, "config.yaml"), "utf8")) as Record<
      string,
      Record<string, unknown>
    >;
    expect(config["teams"]).toMatchObject({
      app_id: APP_ID,
      tenant_id: TENANT_ID,
      login_url: fake.loginUrl,
      allowed_users: [owner],
    });
    expect(JSON.stringify(config)).not.toContain(APP_PASSWORD);
    // Quoted in .env: the secret holds a "~".
    expect(readFileSync(join(run.home, ".env"), "utf8")).toContain(`TEAMS_APP_PASSWORD='${APP_PASSWORD}'`);
  });

  it("refuses a wrong secret with the fix, and writes nothing", async () => {
    const run = await setup([
      "--teams-app-id",
      APP_ID,
      "--teams-app-password",
      "not-the-secret",
      "--teams-login-url",
      fake.loginUrl,
    ]);
    expect(run.code).toBe(1);
    expect(run.out).toMatch(/refused the app id and secret \(invalid_client\)/);
    expect(run.out).not.toContain("not-the-secret");
    expect(existsSync(join(run.home, "config.yaml"))).toBe(false);
  });
});
