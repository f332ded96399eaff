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
import { cloudSetupFlags, cloudSetupStep } from "./cloud-setup.js";
import { execOptionsSchema } from "./options.js";

// What the config loader checks and derives from the section, without loading a backend.
export { type ExecOptions, parseExecOptions } from "./options.js";
export type { BackendName } from "./types.js";
export { type WorkspaceRootSettings, workspaceRoots } from "./workspaces.js";

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
  const { backend, limits, networkAllowed, sandbox, ssh, docker, cloud, daytona, e2b, modal, vercel } =
    section;
  return { backend, limits, networkAllowed, sandbox, ssh, docker, cloud, daytona, e2b, modal, vercel };
}

/** The terminal tools' execution backend: available here, or what is missing and how to add it. */
export async function checkExec(section: ExecSection): Promise<DoctorLine> {
  const options = execBackendOptionsOf(section);
  // The backends load for the check only, not with the config.
  const [{ createExecutionBackend }, { CloudBackend }, { SandboxBackend }] = await Promise.all([
    import("./backend.js"),
    import("./cloud.js"),
    import("./sandbox.js"),
  ]);
  try {
    const backend = createExecutionBackend(options);
    const availability = await backend.checkAvailable();
    await backend.close();
    if (availability.available) {
      const where =
        backend.name === "local"
          ? "on this host, unsandboxed (exec.backend: local)"
          : backend instanceof CloudBackend
            ? `in a ${backend.name} cloud sandbox per workspace (API answered; paused after ${section.cloud.idleStopS} s idle)`
            : `in the ${backend.name} backend`;
      const limit = backend instanceof SandboxBackend ? backend.processLimit() : {};
      // A cloud sandbox has the network its provider gives; exec.network_allowed is the host backends'.
      const network =
        backend instanceof CloudBackend ? "" : options.networkAllowed ? ", with network" : ", no network";
      const runsAs = limit.runsAs ? `, as uid ${limit.runsAs.uid} outside (the gateway is root)` : "";
      return {
        ok: true,
        text: `terminal tools: commands run ${where}${network}${limit.cgroupDir ? ", a pids cgroup per command" : ""}${runsAs}`,
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
      { value: "daytona", label: "Daytona cloud sandbox", hint: "DAYTONA_API_KEY" },
      { value: "e2b", label: "E2B cloud sandbox", hint: "E2B_API_KEY" },
      { value: "modal", label: "Modal cloud sandbox", hint: "MODAL_TOKEN_ID, MODAL_TOKEN_SECRET" },
      { value: "vercel", label: "Vercel Sandbox", hint: "VERCEL_TOKEN, VERCEL_TEAM_ID, VERCEL_PROJECT_ID" },
      {
        value: "local",
        label: "This host, unsandboxed",
        hint: "only for a machine you would give the agent",
      },
      { value: "skip", label: "Skip" },
    ],
    initial: (ctx.files.get("exec.backend") as string | undefined) ?? "sandbox",
  });
  if (backend === "skip") return;
  if (backend === "daytona" || backend === "e2b" || backend === "modal" || backend === "vercel")
    if (!(await cloudSetupStep(ctx, backend))) return;
  ctx.files.set("exec.backend", backend);
}

const execSetup: SetupQuestions = {
  label: "Where the agent's commands run",
  hint: "sandbox (bubblewrap), local, docker, or a cloud sandbox (daytona, e2b, modal, vercel)",
  chosenBy: "exec.backend",
  flags: [
    {
      flag: "--exec-backend <name>",
      key: "exec.backend",
      env: "HERALD_EXEC_BACKEND",
      help: "sandbox, local, docker, daytona, e2b, modal or vercel",
    },
    ...cloudSetupFlags,
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
    HERALD_EXEC_IDLE_STOP_S: ["cloud.idle_stop_s", "int"],
    DAYTONA_API_KEY: ["daytona.api_key", "string"],
    DAYTONA_API_URL: ["daytona.api_url", "string"],
    DAYTONA_TARGET: ["daytona.target", "string"],
    E2B_API_KEY: ["e2b.api_key", "string"],
    E2B_DOMAIN: ["e2b.domain", "string"],
    E2B_API_URL: ["e2b.api_url", "string"],
    E2B_SANDBOX_URL: ["e2b.sandbox_url", "string"],
    MODAL_TOKEN_ID: ["modal.token_id", "string"],
    MODAL_TOKEN_SECRET: ["modal.token_secret", "string"],
    MODAL_SERVER_URL: ["modal.server_url", "string"],
    VERCEL_TOKEN: ["vercel.token", "string"],
    VERCEL_TEAM_ID: ["vercel.team_id", "string"],
    VERCEL_PROJECT_ID: ["vercel.project_id", "string"],
    VERCEL_SANDBOX_API_URL: ["vercel.api_url", "string"],
  },
  reference: {
    intro: "Where the terminal and file tools run. See [Tools](tools.md#where-commands-run).",
    rows: [
      [
        "backend",
        "`sandbox` (bubblewrap), `local` (the host), `ssh`, `docker`, or a cloud sandbox: `daytona`, `e2b`, `modal`, `vercel` ([Cloud sandboxes](sandboxes.md))",
      ],
      [
        "network_allowed",
        "commands may reach the network (sandbox, docker); on with the sandbox it needs `API_SERVER_KEY` while the API server runs (sandboxed commands then share the host's loopback), or the gateway refuses to start",
      ],
      ["groups", "group chats get the terminal and file tools too"],
      ["workspace_scope", "one workspace per session, or per `user`"],
      ["max_timeout_s", "the longest foreground timeout a command may ask for"],
      ["dangerous_commands", "`manual` (ask in the chat), `deny`, `off` (run them, logged at start)"],
      ["approval_timeout_s", "how long an approval request waits"],
      [
        "workspace_retention_days",
        "unused workspaces are deleted, with their checkpoints (never while a process runs there)",
      ],
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
      [
        "cloud.idle_stop_s",
        "a cloud sandbox is paused (files kept) after this long unused, seconds",
        "`600`",
      ],
      [
        "cloud.workdir",
        "the workspace folder inside a cloud sandbox (`{workspace}` is the workspace's folder name)",
        "`/home/daytona/workspace`, `/home/user/workspace` (e2b), `/workspace` (modal), `/vercel/sandbox/workspace`",
      ],
      [
        "daytona.api_key, .api_url, .target",
        "Daytona's key, API address and region",
        "required key for `daytona`",
      ],
      ["daytona.snapshot", "the snapshot new sandboxes start from", "Daytona's default"],
      ["e2b.api_key, .domain", "E2B's key and domain", "required key for `e2b`; `e2b.app`"],
      [
        "e2b.api_url, .sandbox_url",
        "E2B's API and sandbox addresses (self-hosted E2B, tests)",
        "from `domain`",
      ],
      ["e2b.template", "the template new sandboxes start from", "`base`"],
      ["modal.token_id, .token_secret", "Modal's token", "required for `modal`"],
      [
        "modal.app_name, .image, .server_url",
        "the Modal app sandboxes belong to, their image, Modal's API address",
        "`herald`, `debian:bookworm-slim`, the SDK's",
      ],
      [
        "vercel.token, .team_id, .project_id",
        "Vercel's access token, team and project",
        "required for `vercel`",
      ],
      [
        "vercel.api_url, .runtime",
        "Vercel's API address, the sandbox image's runtime",
        "`https://vercel.com/api`, Vercel's default",
      ],
      [
        "daytona.cost_per_hour, e2b.cost_per_hour, modal.cost_per_hour, vercel.cost_per_hour",
        "the price of one sandbox hour in USD, for `/usage` (no provider reports it through its API)",
        "none: `/usage` shows hours only",
      ],
    ],
  },
  doctor: async (section) => [await checkExec(section)],
  setup: execSetup,
});
