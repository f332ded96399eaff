/**
 * The BlueBubbles server's REST API with plain fetch (there is no vendor SDK): every call carries
 * `?password=`, answers are `{ status, message, data }`, and failures become `PlatformError`s — 401
 * final (the password), 429 retryable with its `Retry-After` (a proxy in front of the server), other
 * 4xx final, 5xx and network faults retryable. Error messages never include the URL (it holds the
 * password).
 */
import { PlatformError } from "../../core/errors.js";
import { answerSchema } from "./types.js";

/** How long one REST call may take. */
const CALL_TIMEOUT_MS = 30_000;

/** The REST API of one BlueBubbles server. */
export class BlueBubblesApi {
  constructor(
    private readonly url: string,
    private readonly password: string,
  ) {}

  /** The address of `path` (under `/api/v1/`) with the password and `query`. */
  route(path: string, query: Record<string, string> = {}): URL {
    const url = new URL(`${this.url.replace(/\/+$/, "")}/api/v1/${path}`);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    url.searchParams.set("password", this.password);
    return url;
  }

  /** A raw request (downloads); throws PlatformError on a non-2xx answer. */
  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const what = `${init.method ?? "GET"} /api/v1/${path.split("?")[0]}`;
    let res: Response;
    try {
      res = await fetch(this.route(path), {
        ...init,
        signal: init.signal ?? AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
    } catch (err) {
      throw new PlatformError(
        "bluebubbles",
        `BlueBubbles did not answer ${what}: ${(err as Error).message}`,
        {
          retryable: true,
        },
      );
    }
    if (!res.ok) throw await failure(res, what);
    return res;
  }

  /** A JSON call; resolves to the answer's `data`. */
  async call<T>(
    path: string,
    init: { method?: string; json?: unknown; form?: FormData; signal?: AbortSignal } = {},
  ): Promise<T> {
    const res = await this.fetch(path, {
      method: init.method ?? (init.json || init.form ? "POST" : "GET"),
      ...(init.json !== undefined
        ? { headers: { "content-type": "application/json" }, body: JSON.stringify(init.json) }
        : init.form
          ? { body: init.form }
          : {}),
      ...(init.signal ? { signal: init.signal } : {}),
    });
    const answer = answerSchema.safeParse(await res.json().catch(() => undefined));
    if (!answer.success)
      throw new PlatformError("bluebubbles", `BlueBubbles answered ${path} with something not JSON.`);
    return answer.data.data as T;
  }
}

/** A non-2xx answer as a PlatformError. */
async function failure(res: Response, what: string): Promise<PlatformError> {
  const text = await res.text().catch(() => "");
  let detail = text.slice(0, 200);
  const parsed = answerSchema.safeParse(safeJson(text));
  if (parsed.success) detail = parsed.data.error?.message ?? parsed.data.message ?? detail;
  if (res.status === 401 || res.status === 403) {
    return new PlatformError(
      "bluebubbles",
      `BlueBubbles refused BLUEBUBBLES_PASSWORD (${res.status}) on ${what}. Set it to the server password from the BlueBubbles app's settings.`,
      { code: "platform_auth_failed" },
    );
  }
  if (res.status === 429) {
    const seconds = Number(res.headers.get("retry-after"));
    return new PlatformError("bluebubbles", `BlueBubbles rate-limited ${what}: ${detail}`, {
      code: "platform_rate_limited",
      retryable: true,
      ...(Number.isFinite(seconds) && seconds > 0 ? { retryAfterMs: seconds * 1000 } : {}),
    });
  }
  return new PlatformError("bluebubbles", `BlueBubbles answered ${res.status} to ${what}: ${detail}`, {
    retryable: res.status >= 500,
  });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
