/** The E2B backend: the `e2b` SDK against the fake E2B (control API and envd's Connect RPC). */
import { join } from "node:path";
import { CloudBackend } from "../../agent/exec/cloud.js";
import { createE2bDriver } from "../../agent/exec/cloud-e2b.js";
import { startFakeE2b } from "../fakes/e2b/index.js";
import type { RunningFake } from "../fakes/sandbox-host/index.js";
import { describeCloudBackend } from "./exec-cloud-contract.js";

const API_KEY = "e2b_test_key";

describeCloudBackend("e2b (SDK against the fake E2B API and envd)", {
  start: () => startFakeE2b({ apiKey: API_KEY }),
  make: (fake: RunningFake, root, options = {}) =>
    new CloudBackend({
      provider: "e2b",
      workdir: join(root, "{workspace}"),
      idleStopMs: options.idleStopMs ?? 60_000,
      retryBaseDelayMs: 20,
      killGraceMs: 500,
      driver: () =>
        createE2bDriver({
          apiKey: options.badKey ? "wrong" : API_KEY,
          apiUrl: fake.url,
          sandboxUrl: fake.url,
          idleStopMs: options.idleStopMs ?? 60_000,
        }),
    }),
});
