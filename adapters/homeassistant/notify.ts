/**
 * Messages Herald starts (scheduled reports, `send_message`, a reply that came after its request
 * stopped waiting) go to Home Assistant over its REST API: to the notify service the chat names
 * (`notify.mobile_app_phone`), else the configured one, else a persistent notification in the
 * sidebar whose id is derived from the message (a retried send replaces it instead of adding one).
 */
import { PlatformError } from "../../core/errors.js";
import type { HomeAssistantApi } from "./types.js";

const PLATFORM = "homeassistant";

/** One notification: `target` a notify service (`notify.x`) or undefined for a persistent one. */
export interface Notification {
  target: string | undefined;
  title: string;
  message: string;
  /** The persistent notification's id. */
  id: string;
}

/** Where a chat's messages go: its own id when it names a notify service, else the default. */
export function targetOf(chatId: string, fallback: string | undefined): string | undefined {
  return /^notify\.[a-z0-9_]+$/.test(chatId) ? chatId : fallback;
}

/**
 * Sends one notification. @throws PlatformError: a refused token and an unknown service are final; a
 * 429 carries its wait; a 5xx or an unreachable server is retryable.
 */
export async function notify(api: HomeAssistantApi, n: Notification, signal?: AbortSignal): Promise<void> {
  const [domain, service] = n.target ? n.target.split(".") : ["persistent_notification", "create"];
  const body = n.target
    ? { message: n.message, title: n.title }
    : { message: n.message, title: n.title, notification_id: n.id };
  let res: Response;
  try {
    res = await fetch(`${api.url}/api/services/${domain}/${service}`, {
      method: "POST",
      headers: { authorization: `Bearer ${api.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(15_000)]) : AbortSignal.timeout(15_000),
    });
  } catch (err) {
    throw new PlatformError(PLATFORM, `Home Assistant at ${api.url} could not be reached.`, {
      cause: err,
      retryable: true,
    });
  }
  await res.body?.cancel().catch(() => undefined);
  if (res.ok) return;
  if (res.status === 401 || res.status === 403)
    throw new PlatformError(
      PLATFORM,
      `Home Assistant answered ${res.status}: the access token was refused. Create a new long-lived access token (profile → Security).`,
      { code: "platform_auth_failed" },
    );
  if (res.status === 429) {
    const seconds = Number(res.headers.get("retry-after"));
    throw new PlatformError(PLATFORM, "Home Assistant asked Herald to slow down (429).", {
      code: "platform_rate_limited",
      retryable: true,
      ...(Number.isFinite(seconds) && seconds > 0 ? { retryAfterMs: seconds * 1000 } : {}),
    });
  }
  if (res.status >= 500)
    throw new PlatformError(PLATFORM, `Home Assistant answered ${res.status}; retrying.`, {
      retryable: true,
    });
  throw new PlatformError(
    PLATFORM,
    `Home Assistant answered ${res.status} to ${domain}.${service}: no such service? Check the chat id or homeassistant.notify_service.`,
  );
}
