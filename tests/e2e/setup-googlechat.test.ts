/**
 * `herald setup --non-interactive` for Google Chat: the service-account key checked live (a JWT bearer
 * grant at the fake token endpoint the key names), the key's path, the project number and the owner
 * written to config.yaml; a key the endpoint refuses, or a project name for a number, writes nothing.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { type FakeGoogleChat, PROJECT_NUMBER, startFakeGoogleChat } from "../fakes/googlechat/index.js";
import { nonInteractiveSetup } from "../helpers/setup-cli.js";

let fake: FakeGoogleChat;
beforeAll(async () => {
  fake = await startFakeGoogleChat();
});
afterAll(async () => {
  await fake?.close();
});

const setup = nonInteractiveSetup("gchat");

describe("herald setup for Google Chat", () => {
  it("signs in with the key and writes its path, the project number and the owner", async () => {
    const run = await setup([
      "--googlechat-service-account",
      fake.serviceAccountPath,
      "--googlechat-audience",
      PROJECT_NUMBER,
      "--googlechat-owner",
      "1001",
    ]);
    expect(run.out).toContain("Authentication Audience");
    expect(run.out).toContain("Google Chat app herald-chat@");
    expect(run.code).toBe(0);
    expect(fake.calls.some((c) => c.route === "POST /token")).toBe(true);
    const config = parseYaml(readFileSync(join(run.home, "config.yaml"), "utf8")) as Record<
      string,
      Record<string, unknown>
    >;
    expect(config["googlechat"]).toMatchObject({
      service_account: fake.serviceAccountPath,
      audience: PROJECT_NUMBER,
      allowed_users: ["1001"],
    });
  });

  it("refuses a key the token endpoint does not take, with the fix, and writes nothing", async () => {
    const key = JSON.parse(readFileSync(fake.serviceAccountPath, "utf8")) as Record<string, string>;
    const other = join(run0(), "other-key.json");
    // A well-formed key of another account: its signature does not check out.
    writeFileSync(other, JSON.stringify({ ...key, client_email: "someone-else@x.iam.gserviceaccount.com" }));
    const run = await setup(["--googlechat-service-account", other, "--googlechat-audience", PROJECT_NUMBER]);
    expect(run.code).toBe(1);
    expect(run.out).toMatch(/could not sign in.*create a new JSON key/s);
    expect(run.out).not.toContain("PRIVATE KEY");
    expect(existsSync(join(run.home, "config.yaml"))).toBe(false);
  });

  it("refuses a project id where the number belongs", async () => {
    const run = await setup([
      "--googlechat-service-account",
      fake.serviceAccountPath,
      "--googlechat-audience",
      "my-project",
    ]);
    expect(run.code).toBe(1);
    expect(run.out).toContain("is not a project number");
    expect(existsSync(join(run.home, "config.yaml"))).toBe(false);
  });
});

function run0(): string {
  return fake.serviceAccountPath.slice(0, fake.serviceAccountPath.lastIndexOf("/"));
}
