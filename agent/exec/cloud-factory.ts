/**
 * How each cloud sandbox backend is built from its options: the driver module and its SDK are imported
 * only when the backend is first used.
 */
import type { Logger } from "../../core/logger.js";
import { CloudBackend } from "./cloud.js";
import { type CloudExecOptions, checkCloudKeys, DEFAULT_WORKDIRS } from "./cloud-config.js";
import type { CloudProviderName, CloudSandboxDriver } from "./cloud-types.js";

/** The driver of `provider`, its module imported now (and with it the SDK). */
async function loadDriver(provider: CloudProviderName, o: CloudExecOptions): Promise<CloudSandboxDriver> {
  checkCloudKeys(provider, o[provider]);
  const idleStopMs = o.cloud.idleStopS * 1000;
  switch (provider) {
    case "daytona": {
      const d = o.daytona!; // checkCloudKeys: present
      const { createDaytonaDriver } = await import("./cloud-daytona.js");
      return createDaytonaDriver({ ...d, apiKey: d.apiKey!, idleStopMs });
    }
    case "vercel": {
      const v = o.vercel!;
      const { createVercelDriver } = await import("./cloud-vercel.js");
      return createVercelDriver({ ...v, token: v.token!, teamId: v.teamId!, projectId: v.projectId! });
    }
    case "e2b": {
      const e = o.e2b!;
      const { createE2bDriver } = await import("./cloud-e2b.js");
      return createE2bDriver({ ...e, apiKey: e.apiKey!, idleStopMs });
    }
    case "modal": {
      const m = o.modal!;
      const { createModalDriver } = await import("./cloud-modal.js");
      return createModalDriver({ ...m, tokenId: m.tokenId!, tokenSecret: m.tokenSecret!, idleStopMs });
    }
  }
}

/** Builds the `CloudBackend` of `provider`; nothing is imported or called until its first use. */
export function createCloudExecBackend(
  provider: CloudProviderName,
  options: CloudExecOptions,
  logger: Logger | undefined,
): CloudBackend {
  return new CloudBackend({
    provider,
    workdir: options.cloud.workdir ?? DEFAULT_WORKDIRS[provider],
    idleStopMs: options.cloud.idleStopS * 1000,
    driver: () => loadDriver(provider, options),
    logger,
  });
}
