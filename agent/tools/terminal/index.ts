/**
 * `terminal` and `process` (toolset "terminal"): shell commands in the session's workspace, through the
 * configured execution backend (a bubblewrap sandbox by default). Foreground commands wait up to their
 * timeout and return exit code, output (a head and the tail kept, the rest counted) and duration;
 * background commands return a process id at once, and `process` follows them. Processes belong to the
 * session: they outlive the turn, and the session's reset kills them.
 */
import { z } from "zod";
import { classifyCommand, classifyWrite } from "../../exec/approvals/index.js";
import type {
  ExecutionBackend,
  ProcessInfo,
  ProcessRegistry,
  RunResult,
  Workspace,
  WorkspaceManager,
  WorkspaceQuota,
} from "../../exec/index.js";
import { runCommand } from "../../exec/index.js";
import { defineTool } from "../../tool-registry.js";
import type { Tool, ToolContext } from "../../types.js";
import { askFor, gateDangerous } from "./approval.js";

/** What the terminal tools run with (built once by the composition root). */
export interface TerminalToolsDeps {
  backend: ExecutionBackend;
  workspaces: WorkspaceManager;
  processes: ProcessRegistry;
  /**
   * The workspaces' disk quota: past it a command runs unable to grow any file, and is told why; after
   * a command the workspace is measured again.
   */
  quota?: WorkspaceQuota | undefined;
  /** The longest foreground timeout a call may ask for, in seconds. @defaultValue 600 */
  maxTimeoutS?: number | undefined;
  /** Characters kept of each of stdout and stderr. @defaultValue 20_000 */
  maxOutputChars?: number | undefined;
  /**
   * What happens to a dangerous command (agent/exec/approvals/: recursive deletes outside the workspace, sudo,
   * disk tools, pipes from the network into a shell, code that cannot be read before it runs…), and to
   * text written to a background shell or interpreter that would be: `manual` asks the user in the chat
   * and ends the turn (their `/approve` resumes it and runs the call), `deny` refuses it, `off` runs it
   * (the owner's choice, logged at start). @defaultValue "manual"
   */
  dangerous?: "manual" | "deny" | "off" | undefined;
  /** The workspace's path as commands see it, for the rules about paths outside it. */
  virtualRoot?: string | undefined;
  /**
   * What to do when a background process exits, by process id: the tool adds an entry for a process
   * started with `notify_on_exit`; the registry's `onExit` calls and removes it.
   */
  exitNotices?: Map<string, (info: ProcessInfo) => void> | undefined;
}

const DEFAULT_TIMEOUT_S = 120;

/** The session's workspace, made ready for the backend. */
async function workspaceOf(deps: TerminalToolsDeps, ctx: ToolContext): Promise<Workspace> {
  const workspace = await deps.workspaces.ensure({
    sessionKey: ctx.origin.sessionKey,
    userKey: userKey(ctx),
  });
  await deps.backend.prepare(workspace, ctx.signal);
  return workspace;
}

function userKey(ctx: ToolContext): string {
  return `${ctx.origin.chat.platform}:user:${ctx.origin.userId}`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** A foreground run as the model reads it. */
export function formatRun(result: RunResult): string {
  const status = result.timedOut
    ? `timed out after ${seconds(result.durationMs)} (the command and its children were killed)`
    : result.exitCode === null
      ? `ended by ${result.signal ?? "a signal"} after ${seconds(result.durationMs)}`
      : `exit code ${result.exitCode} after ${seconds(result.durationMs)}`;
  const parts = [status];
  if (result.stdout) parts.push(`stdout:\n${result.stdout}`);
  if (result.stderr) parts.push(`stderr:\n${result.stderr}`);
  if (!result.stdout && !result.stderr) parts.push("(no output)");
  if (result.droppedChars > 0)
    parts.push(
      `[${result.droppedChars} characters of output were dropped from the middle; the start and the end are shown]`,
    );
  return parts.join("\n");
}

function describeProcess(p: ProcessInfo): string {
  const state =
    p.status === "running"
      ? `running for ${seconds(p.runtimeMs)}`
      : `exited (${p.exitCode === null ? `signal ${p.signal}` : `code ${p.exitCode}`}) after ${seconds(p.runtimeMs)}`;
  return `${p.id}: ${state} — ${p.command}`;
}

/** `terminal` and `process`, bound to `deps`. */
export function terminalTools(deps: TerminalToolsDeps): Tool[] {
  const maxTimeoutS = deps.maxTimeoutS ?? 600;
  const mode = deps.dangerous ?? "manual";
  // Per background process: what was written to a shell and is not a whole command yet.
  const stdinPending = new Map<string, string>();
  const terminal = defineTool({
    name: "terminal",
    description: `Run a shell command (sh -c) in this conversation's workspace, ${deps.backend.name === "local" ? "on the host" : `isolated (${deps.backend.name})`}. Returns exit code, stdout, stderr and duration; long output keeps its start and end. Set background: true for servers and long jobs: you get a process id at once and follow it with the process tool.`,
    parameters: z.object({
      command: z.string().min(1).describe("The command line."),
      timeout_s: z
        .number()
        .positive()
        .max(maxTimeoutS)
        .optional()
        .describe(
          `Seconds to wait before killing it (default ${DEFAULT_TIMEOUT_S}, at most ${maxTimeoutS}).`,
        ),
      workdir: z
        .string()
        .optional()
        .describe("Directory inside the workspace to run in (default: its root)."),
      background: z.boolean().optional().describe("Start it and return its process id at once."),
      notify_on_exit: z
        .boolean()
        .optional()
        .describe("background: tell the chat when it finishes (for long jobs nobody is polling)."),
    }),
    toolset: "terminal",
    changesWorkspace: true,
    label: (args) => `$ ${args.command}${args.background ? " &" : ""}`,
    async execute(args, ctx) {
      const workspace = await workspaceOf(deps, ctx);
      if (mode !== "off") {
        const verdict = classifyCommand(args.command, { workspaceDir: deps.virtualRoot ?? workspace.dir });
        if (verdict.dangerous) {
          const held = await gateDangerous(mode, askFor(args.command, verdict), ctx);
          if (held) return held;
        }
      }
      const limit = (await deps.quota?.commandPrefix(workspace)) ?? { prefix: "" };
      const notice = limit.notice ? `\n[${limit.notice}]` : "";
      if (args.background) {
        const info = deps.processes.start(ctx.origin.sessionKey, workspace, {
          command: `${limit.prefix}${args.command}`,
          workdir: args.workdir,
        });
        const chat = ctx.state.chat;
        if (args.notify_on_exit && chat && deps.exitNotices) {
          const where = ctx.origin.chat;
          deps.exitNotices.set(info.id, (done) => {
            const how =
              done.exitCode === null ? `ended by ${done.signal ?? "a signal"}` : `exit code ${done.exitCode}`;
            void chat
              .notify(
                where,
                `${done.exitCode === 0 ? "✅" : "⚠️"} Background process ${done.id} finished (${how}): \`${done.command}\``,
              )
              .catch((err: unknown) => ctx.logger.warn({ err: String(err) }, "exit notice not sent"));
          });
        }
        return `started in the background as ${info.id}. Follow it with the process tool (poll for new output, wait, kill)${args.notify_on_exit ? "; the chat is told when it finishes" : ""}.${notice}`;
      }
      try {
        const result = await runCommand(deps.backend, workspace, {
          command: `${limit.prefix}${args.command}`,
          workdir: args.workdir,
          timeoutMs: (args.timeout_s ?? DEFAULT_TIMEOUT_S) * 1000,
          maxOutputChars: deps.maxOutputChars ?? 20_000,
          signal: ctx.signal,
        });
        return {
          content: `${formatRun(result)}${notice}`,
          isError: result.timedOut || result.exitCode !== 0,
        };
      } finally {
        deps.quota?.invalidate(workspace.dir);
      }
    },
  });

  const processTool = defineTool({
    name: "process",
    description:
      "Follow this conversation's background processes: list; poll (new output since the last poll); log (whole output, paged by offset/limit); wait (until it exits or timeout_s); kill (its whole process group); write (send text to its stdin).",
    parameters: z.object({
      action: z.enum(["list", "poll", "log", "wait", "kill", "write"]),
      id: z.string().optional().describe("The process id (all actions but list)."),
      timeout_s: z
        .number()
        .positive()
        .max(maxTimeoutS)
        .optional()
        .describe("wait: seconds to wait (default 30)."),
      offset: z.number().int().min(0).optional().describe("log: first character to show (default 0)."),
      limit: z
        .number()
        .int()
        .positive()
        .max(50_000)
        .optional()
        .describe("log: characters to show (default 20000)."),
      data: z
        .string()
        .optional()
        .describe(
          "write: the text to send (add \\n for a line). Text for a background shell or interpreter is checked like a command and may wait for the user's approval.",
        ),
      end: z.boolean().optional().describe("write: close stdin after the text."),
    }),
    toolset: "terminal",
    changesWorkspace: true,
    label: (args) => `process ${args.action}${args.id ? ` ${args.id}` : ""}`,
    async execute(args, ctx) {
      const owner = ctx.origin.sessionKey;
      if (args.action === "list") {
        const all = deps.processes.list(owner);
        const worker = deps.processes.worker;
        const note = worker
          ? `this turn runs on worker ${worker}; processes started by turns on other workers stay there and are not listed`
          : undefined;
        if (all.length === 0)
          return `No background processes in this conversation${note ? ` (${note})` : ""}.`;
        return [...all.map(describeProcess), ...(note ? [`(${note})`] : [])].join("\n");
      }
      const id = args.id;
      if (!id)
        return { content: `error: process ${args.action} needs an id (see process list).`, isError: true };
      switch (args.action) {
        case "poll": {
          const { info, output, droppedChars } = deps.processes.poll(owner, id);
          const dropped = droppedChars ? `\n[${droppedChars} characters were lost before this poll]` : "";
          return `${describeProcess(info)}\n${output || "(no new output)"}${dropped}`;
        }
        case "log": {
          const page = deps.processes.readLog(owner, id, args.offset ?? 0, args.limit ?? 20_000);
          const more = page.nextOffset < page.totalChars ? `; read on with offset ${page.nextOffset}` : "";
          const lost = page.firstKeptOffset > 0 ? `; the first ${page.firstKeptOffset} were dropped` : "";
          return `${page.text}\n[characters ${page.offset}–${page.nextOffset} of ${page.totalChars}${lost}${more}]`;
        }
        case "wait":
          return describeProcess(
            await deps.processes.wait(owner, id, (args.timeout_s ?? 30) * 1000, ctx.signal),
          );
        case "kill":
          stdinPending.delete(id);
          return describeProcess(await deps.processes.kill(owner, id));
        case "write": {
          const data = args.data ?? "";
          const info = deps.processes.list(owner).find((p) => p.id === id);
          let pending = "";
          if (info && mode !== "off") {
            const workspaceDir = deps.virtualRoot ?? info.workspaceDir;
            const read = classifyWrite(info.command, stdinPending.get(id) ?? "", data, { workspaceDir });
            if (read.verdict.dangerous) {
              const target = `the stdin of background process ${id} (\`${info.command}\`)`;
              const held = await gateDangerous(mode, askFor(data, read.verdict, target), ctx);
              if (held) return held;
            } else pending = read.pending;
          }
          await deps.processes.write(owner, id, data, args.end ?? false);
          if (pending && !args.end) stdinPending.set(id, pending);
          else stdinPending.delete(id);
          return `wrote ${data.length} characters to ${id}${args.end ? " and closed its stdin" : ""}.`;
        }
      }
    },
  });
  return [terminal, processTool];
}
