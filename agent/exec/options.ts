/**
 * The options of `createExecutionBackend` as read from config (`exec:`), and their check: the schema the
 * config loader reads without loading any backend.
 */
import { z } from "zod";
import { ConfigError } from "../../core/errors.js";
import {
  checkCloudKeys,
  cloudOptionsSchema,
  daytonaOptionsSchema,
  e2bOptionsSchema,
  modalOptionsSchema,
  vercelOptionsSchema,
} from "./cloud-config.js";

const positiveInt = z.number().int().positive();
/** An id for the sandbox's user outside: never 0, the sandbox must not run as root. */
const sandboxId = z
  .number()
  .int()
  .min(1, "must not be 0: the sandbox never runs as root; give an unprivileged id such as 65534")
  .max(4_294_967_294);

/** The options of `createExecutionBackend`, as read from config. */
export const execOptionsSchema = z
  .object({
    /** @defaultValue "sandbox" */
    backend: z
      .enum(["local", "sandbox", "ssh", "docker", "daytona", "e2b", "modal", "vercel"])
      .default("sandbox"),
    limits: z
      .object({
        cpuSeconds: positiveInt,
        memoryBytes: positiveInt,
        maxProcesses: positiveInt,
        maxFileSizeBytes: positiveInt,
        tmpSizeBytes: z
          .number()
          .int()
          .min(1024 * 1024, "give at least 1048576 bytes (1 MiB)"),
        workspaceQuotaBytes: z
          .number()
          .int()
          .min(1024 * 1024, "give at least 1048576 bytes (1 MiB)"),
      })
      .partial()
      .default({}),
    /** Let commands reach the network (sandbox, docker). @defaultValue false */
    networkAllowed: z.boolean().default(false),
    sandbox: z
      .object({
        bwrapPath: z.string().min(1).optional(),
        /** A pids cgroup per command: true finds one, a path names the directory, false: none. @defaultValue true */
        pidsCgroup: z.union([z.boolean(), z.string().min(1)]).optional(),
        /** The unprivileged uid/gid of a root gateway's sandbox. @defaultValue 65534 */
        uid: sandboxId.optional(),
        gid: sandboxId.optional(),
      })
      .optional(),
    ssh: z
      .object({
        host: z.string().min(1),
        user: z.string().min(1),
        port: positiveInt.max(65535).default(22),
        identityFile: z.string().min(1),
        stateDir: z.string().min(1),
        remoteRoot: z.string().min(1).optional(),
        strictHostKeyChecking: z.enum(["accept-new", "yes", "no"]).default("accept-new"),
        knownHostsFile: z.string().min(1).optional(),
      })
      .optional(),
    docker: z.object({ image: z.string().min(1).default("debian:bookworm-slim") }).optional(),
    cloud: cloudOptionsSchema,
    daytona: daytonaOptionsSchema.optional(),
    e2b: e2bOptionsSchema.optional(),
    modal: modalOptionsSchema.optional(),
    vercel: vercelOptionsSchema.optional(),
  })
  .strict();

/** Input of `createExecutionBackend` (before defaults). */
export type ExecOptionsInput = z.input<typeof execOptionsSchema>;
/** Validated options, defaults applied. */
export type ExecOptions = z.output<typeof execOptionsSchema>;

/** The fix to suggest for a bad option, by its path. */
function fixFor(path: string): string {
  if (path === "backend")
    return 'choose one of "local", "sandbox", "ssh", "docker", "daytona", "e2b", "modal", "vercel"';
  if (path.startsWith("cloud.idleStopS")) return "give a whole number of seconds, at least 10";
  if (/^(daytona|e2b|modal|vercel)\..*(Url|url)$/.test(path)) return "give an absolute http(s) URL";
  if (/^(daytona|e2b|modal|vercel)\.costPerHour$/.test(path))
    return "give a price in USD per hour, e.g. 0.05";
  if (path.startsWith("ssh")) return "set exec.ssh.host, user, identityFile (a private key) and stateDir";
  if (path === "limits.tmpSizeBytes" || path === "limits.workspaceQuotaBytes")
    return "give a whole number of bytes, at least 1048576 (1 MiB)";
  if (path.startsWith("limits")) return "give a positive whole number";
  if (path === "sandbox.uid" || path === "sandbox.gid")
    return "give an unprivileged id (not 0, the sandbox must never be root outside), e.g. 65534";
  if (path === "sandbox.pidsCgroup") return "give true, false or a cgroup directory path";
  return "see the exec options in the README";
}

/** Validates `input`; throws `ConfigError` whose `key` is `exec.<option>`. */
export function parseExecOptions(input: unknown): ExecOptions {
  const parsed = execOptionsSchema.safeParse(input ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.join(".") ?? "";
    throw new ConfigError(
      `exec.${path || "options"}`,
      `exec.${path || "options"} is invalid (${issue?.message ?? "invalid"}): ${fixFor(path)}`,
      { cause: parsed.error },
    );
  }
  const options = parsed.data;
  if (options.backend === "ssh" && !options.ssh) {
    throw new ConfigError(
      "exec.ssh",
      'exec.backend is "ssh" but exec.ssh is missing: set exec.ssh.host, user, identityFile and stateDir',
    );
  }
  if (
    options.backend === "daytona" ||
    options.backend === "e2b" ||
    options.backend === "modal" ||
    options.backend === "vercel"
  )
    checkCloudKeys(options.backend, options[options.backend]);
  return options;
}
