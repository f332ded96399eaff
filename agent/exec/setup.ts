/**
 * Where this process runs commands: the configured backend if it is available here, with the
 * workspace quota, the background processes and the access to the workspaces' files the terminal and
 * file tools share. A backend that is not available (bubblewrap missing) turns those tools off and says
 * how to fix it; it never falls back to running commands on the host.
 */
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { WorkspaceAccess } from "./access.js";
import { createExecutionBackend, type ExecOptionsInput } from "./backend.js";
import { CloudBackend } from "./cloud.js";
import { type ProcessInfo, ProcessRegistry } from "./processes.js";
import { WorkspaceQuota } from "./quota.js";
import { SandboxBackend } from "./sandbox.js";
import { DEFAULT_LIMITS, type ExecutionBackend } from "./types.js";
import type { WorkspaceManager } from "./workspaces.js";

/** Commands and files of the workspaces, where the backend is available. */
export interface Execution {
  backend: ExecutionBackend;
  quota: WorkspaceQuota;
  processes: ProcessRegistry;
  /** Told when a background process ends, by process id (`process`'s notices); each is taken once. */
  exitNotices: Map<string, (info: ProcessInfo) => void>;
  /** The workspaces' files, read and written where the commands run. */
  access: WorkspaceAccess;
  /** Where commands see the workspace (`/workspace` in the sandbox and the container), else undefined. */
  virtualRoot: string | undefined;
}

/**
 * Builds the backend `options` name and, when it is available, everything on it; otherwise what is
 * missing and the fix (logged as a warning). `worker` names this process among workers on Redis (its
 * background processes' ids say it). Never throws: a bad `exec` section is reported the same way.
 */
export async function openExecution(
  options: ExecOptionsInput,
  ports: { workspaces: WorkspaceManager; logger: Logger; worker?: string | undefined },
): Promise<Execution | { missing: string; fix: string }> {
  const { workspaces, logger } = ports;
  let backend: ExecutionBackend;
  try {
    const candidate = createExecutionBackend(options, logger);
    const availability = await candidate.checkAvailable();
    if (!availability.available) {
      await candidate.close();
      logger.warn({ missing: availability.missing, fix: availability.fix }, "terminal tools are off");
      return { missing: availability.missing, fix: availability.fix };
    }
    backend = candidate;
  } catch (err) {
    logger.warn({ error: describeError(err) }, "terminal tools are off");
    return { missing: describeError(err), fix: "correct the exec section of config.yaml" };
  }
  let processes: ProcessRegistry | undefined;
  const quota = new WorkspaceQuota({
    backend,
    quotaBytes: options.limits?.workspaceQuotaBytes ?? DEFAULT_LIMITS.workspaceQuotaBytes,
    isBusy: (dir) => processes?.isBusy(dir) ?? false,
    logger,
  });
  const exitNotices = new Map<string, (info: ProcessInfo) => void>();
  processes = new ProcessRegistry({
    backend,
    logger,
    worker: ports.worker,
    onExit: (info) => {
      quota.invalidate(info.workspaceDir);
      exitNotices.get(info.id)?.(info);
      exitNotices.delete(info.id);
    },
  });
  // Commands in the sandbox and the container see the workspace at /workspace, in a cloud sandbox at
  // its workdir: so do the tools.
  const virtualRoot =
    backend.name === "sandbox" || backend.name === "docker"
      ? "/workspace"
      : backend instanceof CloudBackend
        ? backend.fixedRoot()
        : undefined;
  const access = new WorkspaceAccess({ workspaces, backend, quota, virtualRoot });
  if (backend.name === "local")
    logger.warn({}, "terminal tools run commands on this host, unsandboxed (exec.backend: local)");
  if (backend instanceof SandboxBackend) {
    const { cgroupDir, runsAs } = backend.processLimit();
    if (cgroupDir) logger.info({ cgroupDir }, "sandboxed commands get a pids cgroup each");
    if (runsAs) logger.info(runsAs, "the gateway is root: sandboxed commands run as this unprivileged user");
  }
  return { backend, quota, processes, exitNotices, access, virtualRoot };
}
