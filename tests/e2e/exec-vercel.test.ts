/** The Vercel Sandbox backend: `@vercel/sandbox` against the fake Vercel Sandbox API. */
import { join } from "node:path";
import { CloudBackend } from "../../agent/exec/cloud.js";
import { createVercelDriver } from "../../agent/exec/cloud-vercel.js";
import type { RunningFake } from "../fakes/sandbox-host/index.js";
import { startFakeVercel } from "../fakes/vercel/index.js";
import { describeCloudBackend } from "./exec-cloud-contract.js";

const TOKEN = "vercel_test_token";
const TEAM = "team_test";

describeCloudBackend("vercel (SDK against the fake Vercel Sandbox API)", {
  start: () => startFakeVercel({ token: TOKEN, teamId: TEAM }),
  make: (fake: RunningFake, root, options = {}) =>
    new CloudBackend({
      provider: "vercel",
      workdir: join(root, "{workspace}"),
      idleStopMs: options.idleStopMs ?? 60_000,
      retryBaseDelayMs: 20,
      killGraceMs: 500,
      driver: () =>
        createVercelDriver({
          token: options.badKey ? "wrong" : TOKEN,
          teamId: TEAM,
          projectId: "prj_test",
          apiUrl: fake.url,
        }),
    }),
});
