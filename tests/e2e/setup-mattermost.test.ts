/**
 * `herald setup --non-interactive` for Mattermost: the token checked live (`users/me` on the fake
 * server), the address and owner written to config.yaml, the token to .env; a wrong token writes nothing.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { BOT_TOKEN, type FakeMattermost, mmId, startFakeMattermost } from "../fakes/mattermost/index.js";
import { nonInteractiveSetup } from "../helpers/setup-cli.js";

let fake: FakeMattermost;
beforeAll(async () => {
  fake = await startFakeMattermost();
});
afterAll(async () => {
  await fake?.close();
});

const setup = nonInteractiveSetup("mm");

describe("herald setup for Mattermost", () => {
  it("checks the token live and writes the address, the owner and the token", async () => {
    const owner = mmId("ann");
    const run = await setup([
      "--mattermost-url",
      fake.url,
      "--mattermost-token",
      BOT_TOKEN,
      "--mattermost-owner",
      owner,
    ]);
    expect(run.out).toContain("Bot Accounts");
    expect(run.out).toContain("Mattermost bot @herald");
    expect(run.out).not.toContain(BOT_TOKEN);
    expect(run.code).toBe(0);
    const config = parseYaml(readFileSync(join(run.home, "config.yaml"), "utf8")) as Record<
      string,
      Record<string, unknown>
    >;
    expect(config["mattermost"]).toMatchObject({ url: fake.url, allowed_users: [owner] });
    expect(JSON.stringify(config)).not.toContain(BOT_TOKEN);
    expect(readFileSync(join(run.home, ".env"), "utf8")).toContain(`MATTERMOST_TOKEN=${BOT_TOKEN}`);
  });

  it("refuses a wrong token with the fix, and writes nothing", async () => {
    const run = await setup(["--mattermost-url", fake.url, "--mattermost-token", "not-the-token"]);
    expect(run.code).toBe(1);
    expect(run.out).toMatch(/Mattermost answered 401 to users\/me: the access token is wrong or revoked/);
    expect(run.out).not.toContain("not-the-token");
    expect(existsSync(join(run.home, "config.yaml"))).toBe(false);
  });
});
