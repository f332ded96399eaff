import type { ToolExecute } from "../../tool-declaration.js";
import { toOpenAITools, toolsOfSession } from "../../tool-registry.js";
import type { Tool, ToolOutput } from "../../types.js";
import type { ExecuteCodeDeps, ExecuteCodeParameters } from "./declaration.js";
import { type ExecutionOutcome, NOT_FROM_CODE, runExecution } from "./execution.js";
import type { ToolSpec } from "./library.js";

const MAX_LISTED_CALLS = 20;
const MAX_RESULT_CHARS = 10_000;

/** The turn's tools a script may call, as the libraries describe them. */
function specsOf(tools: readonly Tool[]): ToolSpec[] {
  const callable = tools.filter((t) => !(t.name in NOT_FROM_CODE));
  return toOpenAITools(callable).map((t) => ({
    name: t.function.name,
    description: t.function.description ?? "",
    parameters: (t.function.parameters ?? {}) as Record<string, unknown>,
  }));
}

/** What `execute_code` does (`declaration.ts` declares it), bound to `deps`, by name. */
export function executeCodeRuns(deps: ExecuteCodeDeps) {
  const maxTimeoutS = deps.timeoutS ?? 300;
  const executeCode: ToolExecute<ExecuteCodeParameters> = async (args, ctx): Promise<ToolOutput> => {
    const workspace = await deps.workspaces.ensure({
      sessionKey: ctx.origin.sessionKey,
      userKey: `${ctx.origin.chat.platform}:user:${ctx.origin.userId}`,
    });
    await deps.backend.prepare(workspace, ctx.signal);
    const limit = (await deps.quota?.commandPrefix(workspace)) ?? { prefix: "" };
    try {
      const outcome = await runExecution(
        {
          language: args.language,
          code: args.code,
          backend: deps.backend,
          workspace,
          prefix: limit.prefix,
          tools: specsOf(toolsOfSession(deps.toolsFor(ctx.turn?.toolsets ?? []), ctx.origin.sessionKey)),
          timeoutMs: (args.timeout_s ?? maxTimeoutS) * 1000,
          staleAfterMs: maxTimeoutS * 1000 + 10 * 60_000,
          maxToolCalls: deps.maxToolCalls ?? 50,
          maxOutputChars: deps.maxOutputChars ?? 20_000,
        },
        ctx,
      );
      const notice = limit.notice ? `\n[${limit.notice}]` : "";
      return {
        content: `${formatOutcome(outcome)}${notice}`,
        isError: outcome.run.timedOut || outcome.run.exitCode !== 0,
        ...(outcome.files.length ? { files: outcome.files } : {}),
        ...(outcome.usage.length ? { usage: outcome.usage } : {}),
      };
    } finally {
      deps.quota?.invalidate(workspace.dir);
    }
  };
  return { execute_code: executeCode };
}

const secs = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;

/** The outcome as the model reads it. */
export function formatOutcome({ run, result, calls }: ExecutionOutcome): string {
  const status = run.timedOut
    ? `timed out after ${secs(run.durationMs)}: the script and its tool calls were killed`
    : run.exitCode === null
      ? `ended by ${run.signal ?? "a signal"} after ${secs(run.durationMs)}`
      : `exit code ${run.exitCode} after ${secs(run.durationMs)}`;
  const parts = [status];
  if (run.stdout) parts.push(`stdout:\n${run.stdout}`);
  if (run.stderr) parts.push(`stderr:\n${run.stderr}`);
  if (run.droppedChars > 0)
    parts.push(`[${run.droppedChars} characters of output were dropped from the middle]`);
  if (result !== undefined)
    parts.push(
      `return value: ${result.length > MAX_RESULT_CHARS ? `${result.slice(0, MAX_RESULT_CHARS)}… [${result.length - MAX_RESULT_CHARS} more characters]` : result}`,
    );
  parts.push(describeCalls(calls));
  return parts.join("\n");
}

function describeCalls(calls: ExecutionOutcome["calls"]): string {
  if (calls.length === 0) return "tool calls: none";
  const totalMs = calls.reduce((sum, c) => sum + c.durationMs, 0);
  const counts = new Map<string, number>();
  for (const c of calls) counts.set(c.name, (counts.get(c.name) ?? 0) + 1);
  const summary = [...counts].map(([name, n]) => `${name} ×${n}`).join(", ");
  const lines = calls.slice(0, MAX_LISTED_CALLS).map((c, i) => {
    const how = c.refused ? `refused: ${c.refused}` : c.ok ? "ok" : "error";
    return `${i + 1}. ${c.name} ${how} ${c.durationMs} ms`;
  });
  if (calls.length > MAX_LISTED_CALLS) lines.push(`… and ${calls.length - MAX_LISTED_CALLS} more`);
  return [`tool calls: ${calls.length} (${summary}), ${secs(totalMs)} in the calls`, ...lines].join("\n");
}
