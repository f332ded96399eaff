/** The Daytona backend: `@daytonaio/sdk` against the fake Daytona API (control plane and toolbox). */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CloudBackend } from "../../agent/exec/cloud.js";
import { createDaytonaDriver } from "../../agent/exec/cloud-daytona.js";
import { checkExec, execSectionSchema } from "../../agent/exec/settings.js";
import { startFakeDaytona } from "../fakes/daytona/index.js";
import type { RunningFake } from "../fakes/sandbox-host/index.js";
import { describeCloudBackend } from "./exec-cloud-contract.js";

const API_KEY = "dtn_test_key";

describeCloudBackend("daytona (SDK against the fake Daytona API)", {
  start: () => startFakeDaytona({ apiKey: API_KEY }),
  make: (fake: RunningFake, root, options = {}) =>
    new CloudBackend({
      provider: "daytona",
      workdir: join(root, "{workspace}"),
      idleStopMs: options.idleStopMs ?? 60_000,
      retryBaseDelayMs: 20,
      killGraceMs: 500,
      driver: () =>
        createDaytonaDriver({
          apiKey: options.badKey ? "wrong" : API_KEY,
          apiUrl: `${fake.url}/api`,
          idleStopMs: options.idleStopMs ?? 60_000,
        }),
    }),
});

describe("herald doctor's exec line on daytona", () => {
  it("makes the live call and says where commands run; a refused key says so with the fix", async () => {
    const fake = await startFakeDaytona({ apiKey: API_KEY });
    try {
      const section = (apiKey: string) =>
        execSectionSchema.parse({ backend: "daytona", daytona: { apiKey, apiUrl: `${fake.url}/api` } });
      expect(await checkExec(section(API_KEY))).toEqual({
        ok: true,
        text: "terminal tools: commands run in a daytona cloud sandbox per workspace (API answered; paused after 600 s idle)",
      });
      expect(fake.host.requests.filter((r) => r.path === "/api/sandbox").length).toBe(1);
      expect(await checkExec(section("revoked"))).toMatchObject({
        ok: false,
        text: expect.stringMatching(/terminal tools are off: the daytona sandbox API cannot be used/),
        fix: expect.stringMatching(/refused the key \(401\)/),
      });
    } finally {
      await fake.stop();
    }
  });
});
