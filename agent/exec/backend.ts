import type { Logger } from "../../core/logger.js";
import { createCloudExecBackend } from "./cloud-factory.js";
import { DockerBackend } from "./docker.js";
import { LocalBackend } from "./local.js";
import { type ExecOptions, type ExecOptionsInput, parseExecOptions } from "./options.js";
import { SandboxBackend } from "./sandbox.js";
import { SshBackend } from "./ssh.js";
import type { BackendName, ExecutionBackend } from "./types.js";

export {
  type ExecOptions,
  type ExecOptionsInput,
  execOptionsSchema,
  parseExecOptions,
} from "./options.js";

type Factory = (options: ExecOptions, logger: Logger | undefined) => ExecutionBackend;

/** One factory per backend name. */
export const backendFactories: Record<BackendName, Factory> = {
  local: () => new LocalBackend(),
  sandbox: (o) =>
    new SandboxBackend({
      bwrapPath: o.sandbox?.bwrapPath,
      pidsCgroup: o.sandbox?.pidsCgroup,
      uid: o.sandbox?.uid,
      gid: o.sandbox?.gid,
      networkAllowed: o.networkAllowed,
      limits: o.limits,
    }),
  ssh: (o, logger) => {
    const ssh = o.ssh!; // parseExecOptions refuses "ssh" without it.
    return new SshBackend({ ...ssh, logger });
  },
  docker: (o, logger) =>
    new DockerBackend({ image: o.docker?.image, networkAllowed: o.networkAllowed, limits: o.limits, logger }),
  daytona: (o, logger) => createCloudExecBackend("daytona", o, logger),
  e2b: (o, logger) => createCloudExecBackend("e2b", o, logger),
  modal: (o, logger) => createCloudExecBackend("modal", o, logger),
  vercel: (o, logger) => createCloudExecBackend("vercel", o, logger),
};

/**
 * Builds the configured backend. Does not check availability: call `checkAvailable()` at startup and
 * report `missing` and `fix` when it is not. Throws `ConfigError` for invalid options.
 */
export function createExecutionBackend(input: ExecOptionsInput, logger?: Logger): ExecutionBackend {
  const options = parseExecOptions(input);
  return backendFactories[options.backend](options, logger);
}
