/**
 * One `execute_code` run: the script and its client library in a folder of the gateway's own
 * (`HERALD_HOME/run/code/<id>/`, shown read-only to the sandbox at `/run/herald`), the tool socket in
 * it, the script run in the session's workspace through the backend, and every call the script makes
 * run as a call of the turn (`ToolContext.callTool`). When the script ends or times out, the calls
 * still running are aborted and the folder removed.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ModelUsage } from "../../../core/turn.js";
import type { ExecutionBackend, RunResult, Workspace } from "../../exec/index.js";
import { runCommand } from "../../exec/index.js";
import type { Tool, ToolContext, ToolOutput } from "../../types.js";
import { JS_PACKAGE, JS_RUNNER, jsLibrary, PYTHON_RUNNER, pythonLibrary, type ToolSpec } from "./library.js";
import { type CallAnswer, listenToolSocket } from "./socket-server.js";

/** Where the sandbox sees the execution's folder. */
export const SANDBOX_TOOLS_DIR = "/run/herald";

/** Where the sandbox sees this process's node when it is not under /usr. */
const SANDBOX_NODE = "/opt/herald-code-node/node";

/** Tools a script may not call, and why (the script's ToolError says it). */
export const NOT_FROM_CODE: Readonly<Record<string, string>> = {
  clarify: "clarify asks the user, which a script cannot do: call clarify directly (not from code)",
  execute_code: "execute_code cannot be called from code",
  load_tools: "load_tools is not needed from code: every tool of the turn is callable",
  delegate_task: "delegate_task is not callable from code: call it directly",
};

/** One call a script made. */
export interface CodeCall {
  name: string;
  ok: boolean;
  durationMs: number;
  /** Why it did not run (not callable, approval needed, over budget). */
  refused?: string | undefined;
}

/** What an execution gives back. */
export interface ExecutionOutcome {
  run: RunResult;
  /** The script's return value as JSON text, when it ended normally. */
  result: string | undefined;
  calls: CodeCall[];
  files: NonNullable<ToolOutput["files"]>;
  usage: ModelUsage[];
}

/** One execution's inputs. */
export interface ExecutionInput {
  language: "python" | "javascript";
  code: string;
  backend: ExecutionBackend;
  workspace: Workspace;
  /** Prepended to the command (the workspace quota's `ulimit`). */
  prefix: string;
  tools: readonly ToolSpec[];
  timeoutMs: number;
  /** Execution folders older than this are a crash's leftovers (the longest timeout, and a margin). */
  staleAfterMs: number;
  maxToolCalls: number;
  maxOutputChars: number;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Folders left by executions a crash cut short: older than the longest run may take, and some. */
async function sweepStale(base: string, olderThanMs: number): Promise<void> {
  const now = Date.now();
  for (const name of await readdir(base).catch(() => [])) {
    const path = join(base, name);
    const info = await stat(path).catch(() => undefined);
    if (info && now - info.mtimeMs > olderThanMs) await rm(path, { recursive: true, force: true });
  }
}

/**
 * A folder of its own for the execution; under /tmp when `HERALD_HOME` is too deep for a socket path.
 * Folders older than `staleAfterMs` (a crash's leftovers) are removed first.
 */
async function executionDir(homeDir: string, staleAfterMs: number): Promise<string> {
  const root = join(homeDir, "run", "code");
  const base = root.length < 70 ? root : join(tmpdir(), "herald-code");
  await mkdir(base, { recursive: true, mode: 0o700 });
  await sweepStale(base, staleAfterMs);
  const dir = await mkdtemp(join(base, "x"));
  // Readable by the sandbox's user through the bind (the parent keeps other host users out).
  await chmod(dir, 0o755);
  return dir;
}

async function writeScript(dir: string, input: ExecutionInput): Promise<string> {
  const file = (name: string, text: string) => writeFile(join(dir, name), text, { mode: 0o644 });
  if (input.language === "python") {
    await file("code.py", input.code);
    await file("herald_tools.py", pythonLibrary(input.tools));
    await file("main.py", PYTHON_RUNNER);
    return "main.py";
  }
  await file("code.mjs", input.code);
  await file("main.mjs", JS_RUNNER);
  const lib = join(dir, "node_modules", "herald-tools");
  await mkdir(lib, { recursive: true, mode: 0o755 });
  await file("node_modules/herald-tools/package.json", JS_PACKAGE);
  await file("node_modules/herald-tools/index.mjs", jsLibrary(input.tools));
  return "main.mjs";
}

/** Runs one script; see the module comment. Throws only when the turn is cancelled. */
export async function runExecution(input: ExecutionInput, ctx: ToolContext): Promise<ExecutionOutcome> {
  const dir = await executionDir(ctx.homeDir, input.staleAfterMs);
  const token = randomBytes(24).toString("base64url");
  const stop = new AbortController();
  const signal = AbortSignal.any([ctx.signal, stop.signal]);
  const outcome: Omit<ExecutionOutcome, "run"> = { result: undefined, calls: [], files: [], usage: [] };
  const inflight = new Set<Promise<unknown>>();
  try {
    const main = await writeScript(dir, input);
    const server = await listenToolSocket(join(dir, "tools.sock"), token, {
      call: (tool, args) => {
        const p = callFromCode(tool, args, { input, ctx, signal, outcome });
        inflight.add(p);
        return p.finally(() => inflight.delete(p));
      },
      result: (value) => {
        outcome.result = value;
      },
    });
    try {
      const sandboxed = input.backend.name === "sandbox";
      const seen = sandboxed ? SANDBOX_TOOLS_DIR : dir;
      // A node outside /usr (nvm, a tarball) is not in the sandbox: it is bound in, as the file helper's is.
      const ownNode = sandboxed && input.language === "javascript" && !process.execPath.startsWith("/usr/");
      const interpreter = input.language === "python" ? "python3" : ownNode ? SANDBOX_NODE : "node";
      const mounts = [
        { hostPath: dir, path: SANDBOX_TOOLS_DIR },
        ...(ownNode ? [{ hostPath: process.execPath, path: SANDBOX_NODE }] : []),
      ];
      const run = await runCommand(input.backend, input.workspace, {
        command: `${input.prefix}exec ${interpreter} ${quote(`${seen}/${main}`)}`,
        env: {
          HERALD_TOOLS_SOCKET: `${seen}/tools.sock`,
          HERALD_TOOLS_TOKEN: token,
          PYTHONPATH: seen,
          PYTHONDONTWRITEBYTECODE: "1",
          PYTHONUNBUFFERED: "1",
        },
        ...(sandboxed ? { mounts } : {}),
        timeoutMs: input.timeoutMs,
        maxOutputChars: input.maxOutputChars,
        signal: ctx.signal,
      });
      return { run, ...outcome };
    } finally {
      // The script is gone: calls it left running end with it.
      stop.abort();
      await Promise.allSettled([...inflight]);
      await server.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

interface CallScope {
  input: ExecutionInput;
  ctx: ToolContext;
  signal: AbortSignal;
  outcome: Omit<ExecutionOutcome, "run">;
}

/** One call from the script, as a call of the turn; never throws. */
async function callFromCode(
  tool: string,
  args: Record<string, unknown>,
  { input, ctx, signal, outcome }: CallScope,
): Promise<CallAnswer> {
  const refuse = (error: string): CallAnswer => {
    outcome.calls.push({ name: tool, ok: false, durationMs: 0, refused: error });
    return { ok: false, error };
  };
  const notHere = NOT_FROM_CODE[tool];
  if (notHere) return refuse(notHere);
  const made = outcome.calls.filter((c) => !c.refused).length;
  if (made >= input.maxToolCalls)
    return refuse(
      `the budget of ${input.maxToolCalls} tool calls per execution is used up: return what you have, or run another execution`,
    );
  if (!ctx.callTool) return refuse("tool calls from code are not available in this process");
  if (signal.aborted) return refuse("the execution is over");
  const record: CodeCall = { name: tool, ok: false, durationMs: 0 };
  outcome.calls.push(record);
  const started = performance.now();
  let output: ToolOutput;
  try {
    output = await ctx.callTool(
      { id: `${ctx.callId ?? "code"}.${made + 1}`, name: tool, arguments: JSON.stringify(args) },
      { signal, tools: (t: Tool) => !(t.name in NOT_FROM_CODE) },
    );
  } catch (err) {
    record.refused = signal.aborted ? "the execution ended while it ran" : String(err);
    return { ok: false, error: record.refused };
  } finally {
    record.durationMs = Math.round(performance.now() - started);
  }
  if (output.approval) {
    record.refused = `needs the user's approval (${output.approval.ruleId})`;
    return {
      ok: false,
      error: `${tool} was not run: ${output.approval.ruleDescription} needs the user's approval, which a script cannot ask for. Make this call directly (not from code) so the user is asked.`,
    };
  }
  if (output.stopTurn) {
    record.refused = "needs the user";
    return {
      ok: false,
      error: `${tool} needs the user's answer, which a script cannot wait for: call it directly`,
    };
  }
  outcome.files.push(...(output.files ?? []));
  outcome.usage.push(...(output.usage ?? []));
  record.ok = !output.isError;
  return { ok: true, content: output.content, isError: Boolean(output.isError) };
}
