/**
 * `execute_code` (toolset "code"): many tool calls in one model step. The model writes a Python or
 * JavaScript script; Herald writes it with a generated client library (`herald_tools` /
 * `herald-tools`, one function per tool the turn may call) into a folder of its own
 * (`HERALD_HOME/run/code/<id>/`), listens on a Unix socket in that folder, and runs the script in the
 * session's workspace through the execution backend. In the sandbox the folder is bound read-only at
 * `/run/herald`: no other session's sandbox has that mount, and each request must carry the
 * execution's random token. Each call the script makes runs as a call of the turn
 * (`ToolContext.callTool`: the plugins' hooks, the approval rules, the owner rules, the chat's
 * progress lines), within a budget of calls per execution; a call that would need the user (`clarify`,
 * a command waiting for approval) is refused with a message the script sees as `ToolError`. The
 * script's timeout kills it and aborts its calls. Backends whose commands cannot reach a socket of this
 * host (ssh, docker) do not offer the tool.
 */

export type { ExecuteCodeDeps } from "./declaration.js";
export { CODE_BACKENDS, executeCodeTool } from "./declaration.js";
export { type CodeCall, type ExecutionOutcome, NOT_FROM_CODE, SANDBOX_TOOLS_DIR } from "./execution.js";
export { jsLibrary, pythonLibrary, type ToolSpec } from "./library.js";
export { type CodeSection, codeSettings } from "./settings.js";
