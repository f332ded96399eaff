/** The Daytona backend: `@daytonaio/sdk` against the fake Daytona API (control plane and toolbox). */
import { join } from "node:path";
import { CloudBackend } from "../../agent/exec/cloud.js";
import { createDaytonaDriver } from "../../agent/exec/cloud-daytona.js";
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
