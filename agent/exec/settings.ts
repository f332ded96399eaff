/**
 * The `exec:` settings of where the agent's commands run: the backend's own options (`execOptionsSchema`)
 * plus the terminal tools' and approvals' settings, their env names, their reference rows, the doctor's
 * check that the backend is available here, and the setup question that picks the backend.
 */
import { z } from "zod";
import { describeError } from "../../core/errors.js";
import type { DoctorLine } from "../../core/settings.js";
import { defineFeature } from "../../core/settings.js";
import type { SetupQuestions, StepContext } from "../../core/setup.js";
import { createExecutionBackend, execOptionsSchema } from "./backend.js";
import { SandboxBackend } from "./sandbox.js";
import { DEFAULT_LIMITS } from "./types.js";

/** The `exec` section: the backend's options and the tools' settings. */
export const execSectionSchema = execOptionsSchema
  .extend({
    /** One workspace per session (default) or per user. */
    workspaceScope: z.enum(["session", "user"]).default("session"),
    /** The longest foreground timeout a terminal call may ask for, in seconds. */
    maxTimeoutS: z.number().int().positive().default(600),
    /** Give groups the terminal tools too (DMs of allowed users have them by default). */
    groups: z.boolean().default(false),
    /**
     * Dangerous commands: `manual` asks the user in the chat (/approve, /deny), `deny` refuses them,
     * `off` runs them (logged loudly at start).
     */
    dangerousCommands: z.enum(["manual", "deny", "off"]).default("manual"),
    /** How long an approval request waits for the user's answer, in seconds. */
    approvalTimeoutS: z.number().int().positive().default(300),
    /** Workspaces unused for this many days are deleted (never while a process runs there). */
    workspaceRetentionDays: z.number().int().positive().default(30),
    /**
     * On Redis, hand each session's workspace over through the gateway, so every worker sees the files
     * of the session's earlier turns (off: each worker keeps its own, as where workers share one
     * HERALD_HOME on a network file system).
     */
    workspaceHandover: z.boolean().default(true),
  })
  .prefault({});

/** The parsed `exec` section. */
export type ExecSection = z.output<typeof execSectionSchema>;

/** The execution backend's own options out of the `exec` section (the rest is the tools' settings). */
export function execBackendOptionsOf(section: ExecSection) {
  const { backend, limits, networkAllowed, sandbox, ssh, docker } = section;
  return { backend, limits, networkAllowed, sandbox, ssh, docker };
}

/** The terminal tools' execution backend: available here, or what is missing and how to add it. */
export async function checkExec(section: ExecSection): Promise<DoctorLine> {
  const options = execBackendOptionsOf(section);
  try {
    const backend = createExecutionBackend(options);
    const availability = await backend.checkAvailable();
    await backend.close();
    if (availability.available) {
      const where =
        backend.name === "local"
          ? "on this host, unsandboxed (exec.backend: local)"
          : `in the ${backend.name} backend`;
      const limit = backend instanceof SandboxBackend ? backend.processLimit() : {};
      const runsAs = limit.runsAs ? `, as uid ${limit.runsAs.uid} outside (the gateway is root)` : "";
      return {
        ok: true,
        text: `terminal tools: commands run ${where}${options.networkAllowed ? ", with network" : ", no network"}${limit.cgroupDir ? ", a pids cgroup per command" : ""}${runsAs}`,
      };
    }
    return {
      ok: false,
      text: `terminal tools are off: ${availability.missing}`,
      fix: availability.fix,
    };
  } catch (err) {
    return {
      ok: false,
      text: `terminal tools are off: ${describeError(err)}`,
      fix: "correct the exec section of config.yaml",
    };
  }
}

async function execStep(ctx: StepContext): Promise<void> {
  const backend = await ctx.p.select({
    key: "exec.backend",
    message: "Where do the agent's shell commands run?",
    options: [
      { value: "sandbox", label: "Sandbox (bubblewrap)", hint: "default; apt-get install bubblewrap" },
      { value: "docker", label: "Docker container" },
      {
        value: "local",
        label: "This host, unsandboxed",
        hint: "only for a machine you would give the agent",
      },
      { value: "skip", label: "Skip" },
    ],
    initial: (ctx.files.get("exec.backend") as "sandbox" | "docker" | "local" | undefined) ?? "sandbox",
  });
  if (backend !== "skip") ctx.files.set("exec.backend", backend);
}

const execSetup: SetupQuestions = {
  label: "Where the agent's commands run",
  hint: "sandbox (bubblewrap), local, docker",
  chosenBy: "exec.backend",
  flags: [
    {
      flag: "--exec-backend <name>",
      key: "exec.backend",
      env: "HERALD_EXEC_BACKEND",
      help: "sandbox, local or docker",
    },
  ],
  step: execStep,
};

const bytes = (n: number, shown: string) => `\`${n}\` (${shown})`;

/** Where the agent's commands run. */
export const execSettings = defineFeature({
  key: "exec",
  schema: execSectionSchema,
  env: {
    HERALD_EXEC_BACKEND: ["backend", "string"],
    HERALD_EXEC_NETWORK: ["network_allowed", "bool"],
    HERALD_EXEC_GROUPS: ["groups", "bool"],
    HERALD_EXEC_WORKSPACE_SCOPE: ["workspace_scope", "string"],
    HERALD_EXEC_MAX_TIMEOUT_S: ["max_timeout_s", "int"],
    HERALD_EXEC_DANGEROUS_COMMANDS: ["dangerous_commands", "string"],
    HERALD_EXEC_APPROVAL_TIMEOUT_S: ["approval_timeout_s", "int"],
    HERALD_EXEC_WORKSPACE_RETENTION_DAYS: ["workspace_retention_days", "int"],
    HERALD_EXEC_WORKSPACE_HANDOVER: ["workspace_handover", "bool"],
    HERALD_EXEC_TMP_SIZE_BYTES: ["limits.tmp_size_bytes", "int"],
    HERALD_EXEC_WORKSPACE_QUOTA_BYTES: ["limits.workspace_quota_bytes", "int"],
    HERALD_EXEC_SANDBOX_UID: ["sandbox.uid", "int"],
    HERALD_EXEC_SANDBOX_GID: ["sandbox.gid", "int"],
  },
  reference: {
    intro: "Where the terminal and file tools run. See [Tools](tools.md#where-commands-run).",
    rows: [
      ["backend", "`sandbox` (bubblewrap), `local` (the host), `ssh`, `docker`"],
      [
        "network_allowed",
        "commands may reach the network (sandbox, docker); on with the sandbox it needs `API_SERVER_KEY` while the API server runs (sandboxed commands then share the host's loopback), or the gateway refuses to start",
      ],
      ["groups", "group chats get the terminal and file tools too"],
      ["workspace_scope", "one workspace per session, or per `user`"],
      ["max_timeout_s", "the longest foreground timeout a command may ask for"],
      ["dangerous_commands", "`manual` (ask in the chat), `deny`, `off` (run them, logged at start)"],
      ["approval_timeout_s", "how long an approval request waits"],
      ["workspace_retention_days", "unused workspaces are deleted (never while a process runs there)"],
      [
        "workspace_handover",
        "on Redis, workers hand each session's workspace over through the gateway, so a turn on any worker sees the files of the earlier ones (`false`: each worker keeps its own); see [Scaling out](scaling-out.md#workspaces-follow-the-session)",
        "`true`",
      ],
      ["limits.cpu_seconds", "CPU time of one command", `\`${DEFAULT_LIMITS.cpuSeconds}\``],
      ["limits.memory_bytes", "address space of one command", `\`${DEFAULT_LIMITS.memoryBytes}\``],
      ["limits.max_processes", "processes of one command", `\`${DEFAULT_LIMITS.maxProcesses}\``],
      [
        "limits.max_file_size_bytes",
        "largest file a command writes",
        `\`${DEFAULT_LIMITS.maxFileSizeBytes}\``,
      ],
      [
        "limits.tmp_size_bytes",
        "size of the sandbox's `/tmp` and of its `/dev/shm`, each (tmpfs: they count against the host's RAM); 1 MiB at least",
        bytes(DEFAULT_LIMITS.tmpSizeBytes, "256 MiB"),
      ],
      [
        "limits.workspace_quota_bytes",
        "disk one workspace may hold; past it file writes are refused and commands cannot grow files until files are deleted; 1 MiB at least",
        bytes(DEFAULT_LIMITS.workspaceQuotaBytes, "2 GiB"),
      ],
      ["sandbox.bwrap_path", "the bubblewrap binary", "`/usr/bin/bwrap`"],
      [
        "sandbox.pids_cgroup",
        "a pids cgroup per command: `true` finds one, a path names the directory, `false` none",
        "`true`",
      ],
      [
        "sandbox.uid",
        "who a root gateway's sandboxed commands run as outside (never 0; ignored for a gateway that is not root)",
        "`65534` (`nobody`)",
      ],
      ["sandbox.gid", "their group", "`exec.sandbox.uid`"],
      [
        "ssh.host, .user, .identity_file, .state_dir",
        "the remote host, its user, the private key, a local directory for the control socket",
        "required for `ssh`",
      ],
      ["ssh.port", ""],
      ["ssh.remote_root", "where remote workspaces live", "`herald-workspaces` (in the remote home)"],
      ["ssh.strict_host_key_checking", "`accept-new`, `yes` or `no`"],
      ["ssh.known_hosts_file", "", "`<state_dir>/known_hosts`"],
      ["docker.image", "the image of the per-workspace container"],
    ],
  },
  doctor: async (section) => [await checkExec(section)],
  setup: execSetup,
});
