/**
 * The `execute_code` tool's declaration; its implementation (`tool.ts`, with the tool socket and the
 * scripts' client libraries) loads on its first call.
 */

import { z } from "zod";
import type { ExecutionBackend, WorkspaceManager, WorkspaceQuota } from "../../exec/index.js";
import { declareTool, runsFrom } from "../../tool-declaration.js";
import type { Tool } from "../../types.js";

/** What `execute_code` runs with (built once by the composition root). */
export interface ExecuteCodeDeps {
  backend: ExecutionBackend;
  workspaces: WorkspaceManager;
  quota?: WorkspaceQuota | undefined;
  /** The tools of the given toolsets (the turn's), for the client library. */
  toolsFor: (toolsets: readonly string[]) => readonly Tool[];
  /** @defaultValue 300 */
  timeoutS?: number | undefined;
  /** @defaultValue 50 */
  maxToolCalls?: number | undefined;
  /** @defaultValue 20_000 */
  maxOutputChars?: number | undefined;
}

/** `execute_code`'s arguments, with the longest timeout a call may ask for. */
export function executeCodeParameters(maxTimeoutS: number) {
  return z.object({
    language: z.enum(["python", "javascript"]),
    code: z.string().min(1).max(100_000).describe("The script."),
    timeout_s: z
      .number()
      .positive()
      .max(maxTimeoutS)
      .optional()
      .describe(`Seconds before the script and its calls are killed (default and most: ${maxTimeoutS}).`),
  });
}

/** The type of {@link executeCodeParameters}' schema. */
export type ExecuteCodeParameters = ReturnType<typeof executeCodeParameters>;

/** Backends whose commands can reach a Unix socket of the gateway's host. */
export const CODE_BACKENDS: readonly string[] = ["sandbox", "local"];

const codeRuns = runsFrom(() => import("./tool.js"), "executeCodeRuns");

/** `execute_code`, bound to `deps`. */
export function executeCodeTool(deps: ExecuteCodeDeps): Tool {
  return declareTool<ExecuteCodeParameters, ExecuteCodeDeps>({
    name: "execute_code",
    description: `Run a short Python or JavaScript script in this conversation's workspace that calls your tools itself: use it for tasks of many small steps (list files, read or grep each, summarise), so they take one step and their intermediate results stay out of the conversation. Python: \`from herald_tools import read_file, terminal\` (also in scope without importing); each tool is a function with keyword arguments returning the tool's text; the value of a last bare expression is returned. JavaScript (an ES module): \`import { read_file } from "herald-tools"\`; each tool takes an arguments object and resolves with its text; \`export default\` the value to return. A refused call raises ToolError (clarify, tools needing the user's approval, over ${deps.maxToolCalls ?? 50} calls). Returns stdout, stderr, the return value and the calls made.`,
    parameters: executeCodeParameters(deps.timeoutS ?? 300),
    toolset: "code",
    changesWorkspace: true,
    label: (args) => `🐍 ${args.language}: ${args.code.split("\n").length} lines`,
    implementation: codeRuns("execute_code"),
  }).with(deps);
}
