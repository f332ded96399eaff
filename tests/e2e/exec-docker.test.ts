import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { DockerBackend } from "../../agent/exec/docker.js";
import { describeBackendContract } from "./exec-contract.js";

function engineRuns(): boolean {
  try {
    execFileSync("docker", ["info"], { stdio: "ignore", timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

const hasEngine = engineRuns();

describe("DockerBackend availability", () => {
  it.skipIf(hasEngine)("says clearly that no Docker engine answers, and the fix", async () => {
    const availability = await new DockerBackend().checkAvailable();
    expect(availability).toMatchObject({
      available: false,
      missing: expect.stringContaining("no Docker engine answers"),
      fix: expect.stringContaining("start the engine"),
    });
  });

  it("says the CLI is missing when it is", async () => {
    const availability = await new DockerBackend({ dockerPath: "/nonexistent/docker" }).checkAvailable();
    expect(availability).toMatchObject({ available: false, missing: "the docker CLI is not installed" });
  });
});

describe.runIf(hasEngine)("DockerBackend (needs a Docker engine)", () => {
  describeBackendContract("docker (needs a Docker engine)", async () => new DockerBackend());
});
