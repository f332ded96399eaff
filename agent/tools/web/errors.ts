import { HeraldError, type HeraldErrorCode } from "../../../core/errors.js";

/**
 * Why a web fetch failed. Callers branch on this, never on the message:
 * - `invalid_url`, `unsupported_scheme`, `blocked_address`, `unsupported_type`: the request is not allowed;
 *   trying again cannot help.
 * - `too_large`, `too_many_redirects`, `http_status`: the page answered but not in a form we read.
 * - `timeout`, `network`, `dns`: the network failed; may work on a retry (see `retryable`).
 * - `aborted`: the caller's AbortSignal fired.
 */
export type WebErrorReason =
  | "invalid_url"
  | "unsupported_scheme"
  | "blocked_address"
  | "unsupported_type"
  | "too_large"
  | "too_many_redirects"
  | "http_status"
  | "timeout"
  | "network"
  | "dns"
  | "aborted";

const CODES: Record<WebErrorReason, HeraldErrorCode> = {
  invalid_url: "invalid_input",
  unsupported_scheme: "invalid_input",
  blocked_address: "invalid_input",
  unsupported_type: "invalid_input",
  too_large: "tool_error",
  too_many_redirects: "tool_error",
  http_status: "tool_error",
  timeout: "tool_error",
  network: "tool_error",
  dns: "tool_error",
  aborted: "turn_cancelled",
};

/**
 * A web fetch or extraction failed. `message` is written for the model and the owner: it says what
 * happened and, where there is one, what to do. `status` is the HTTP status when the server answered.
 */
export class WebError extends HeraldError {
  readonly reason: WebErrorReason;
  readonly url: string;
  readonly status: number | undefined;

  constructor(
    reason: WebErrorReason,
    url: string,
    message: string,
    options: { cause?: unknown; retryable?: boolean; status?: number } = {},
  ) {
    super(message, { code: CODES[reason], cause: options.cause, retryable: options.retryable ?? false });
    this.name = "WebError";
    this.reason = reason;
    this.url = url;
    this.status = options.status;
  }
}
