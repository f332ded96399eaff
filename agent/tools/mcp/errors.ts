/**
 * The MCP client's errors: a server that cannot take a call now, a tool a server no longer has, and
 * the text of a failed connection (with the HTTP status and, for refused credentials, where to fix them).
 */
import { describeError, HeraldError } from "../../../core/errors.js";

/** A call to a server that is not connected, that died during the call, or that did not answer in time. */
export class McpUnavailableError extends HeraldError {
  readonly server: string;
  constructor(server: string, message: string, options: { cause?: unknown } = {}) {
    super(message, { code: "tool_error", cause: options.cause, retryable: true });
    this.name = "McpUnavailableError";
    this.server = server;
  }
}

/**
 * A call to a tool the server no longer lists (it was offered from the cached list, or before a
 * `tools/list_changed`): calling it again cannot help, another tool may.
 */
export class McpToolGoneError extends HeraldError {
  readonly server: string;
  readonly tool: string;
  constructor(server: string, tool: string, offered: readonly string[]) {
    super(
      `MCP server '${server}' no longer has the tool '${tool}' (its tool list changed since it was listed); ` +
        `its tools now: ${offered.join(", ") || "none"}.`,
      { code: "tool_error", retryable: false },
    );
    this.name = "McpToolGoneError";
    this.server = server;
    this.tool = tool;
  }
}

/** The HTTP status an SDK error carries (a remote server's answer), if any. */
export const httpStatusOf = (err: unknown): number | undefined => {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === "number" && code >= 400 && code < 600 ? code : undefined;
};

/** Whether the server refused the credentials (401, 403). */
export const isAuthRefusal = (err: unknown) => [401, 403].includes(httpStatusOf(err) ?? 0);

/** Why a connection failed, with the HTTP status and, for a refused credential, where to fix it. */
export function connectError(err: unknown, server: string): string {
  const status = httpStatusOf(err);
  if (status === undefined) return describeError(err);
  const fix = isAuthRefusal(err)
    ? `: the server refused the credentials; check mcp_servers.${server}.bearer_token_env (and the token in .env) or headers`
    : "";
  return `${describeError(err)} (HTTP ${status})${fix}`;
}
