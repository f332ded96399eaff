/**
 * The live checks of `herald setup`: each asks the real service whether a credential works, before it is
 * saved. Every failure is a `CheckFailed` whose message says what was wrong and how to fix it; secrets
 * never appear in a message.
 */
import { CheckFailed } from "./types.js";

const TIMEOUT_MS = 15_000;

interface HttpAnswer {
  status: number;
  body: Record<string, unknown>;
}

async function call(
  what: string,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number } = {},
): Promise<HttpAnswer> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: init.method ?? "GET",
      headers: init.headers,
      body: init.body,
      signal: AbortSignal.timeout(init.timeoutMs ?? TIMEOUT_MS),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const reason = cause?.code ?? cause?.message ?? (err as Error).message;
    throw new CheckFailed(
      `Cannot reach ${what} at ${new URL(url).origin} (${reason}). Check the address and your network.`,
    );
  }
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    body = { raw: text.slice(0, 200) };
  }
  return { status: res.status, body };
}

const trim = (url: string) => url.replace(/\/+$/, "");

/** The model endpoint: lists its models with the key (a real, authenticated request). */
export async function checkModel(baseUrl: string, apiKey: string | undefined): Promise<{ models: string[] }> {
  const headers: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
  const answer = await call("the model endpoint", `${trim(baseUrl)}/models`, { headers });
  if (answer.status === 401 || answer.status === 403) {
    throw new CheckFailed(
      `The model endpoint answered ${answer.status}: the API key was refused. Check the key (and that it belongs to this provider).`,
    );
  }
  if (answer.status === 404) return { models: [] }; // some servers have no /models; the model is asked for by name
  if (answer.status >= 400) {
    throw new CheckFailed(
      `The model endpoint answered ${answer.status} to GET /models. Check the base URL (it usually ends in /v1).`,
    );
  }
  const data = Array.isArray(answer.body["data"]) ? (answer.body["data"] as { id?: unknown }[]) : [];
  return {
    models: data
      .map((m) => String(m.id ?? ""))
      .filter(Boolean)
      .sort(),
  };
}

/** One chat completion of one token: the model answers under this name. */
export async function checkModelAnswers(
  baseUrl: string,
  apiKey: string | undefined,
  model: string,
): Promise<void> {
  const answer = await call("the model endpoint", `${trim(baseUrl)}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "ping" }], max_tokens: 1 }),
    timeoutMs: 60_000,
  });
  if (answer.status === 401 || answer.status === 403) {
    throw new CheckFailed(
      `The model endpoint answered ${answer.status} to a chat request: the API key was refused. Check the key (and that it belongs to this provider).`,
    );
  }
  if (answer.status >= 400) {
    const message = (answer.body["error"] as { message?: string } | undefined)?.message ?? "";
    throw new CheckFailed(
      `The model '${model}' did not answer (HTTP ${answer.status}${message ? `: ${message}` : ""}). Check the model name.`,
    );
  }
}

/** Telegram's getMe: the bot's username. */
export async function checkTelegram(
  apiRoot: string,
  token: string,
): Promise<{ username: string; id: number }> {
  const answer = await call("Telegram", `${trim(apiRoot)}/bot${token}/getMe`);
  if (answer.status === 401 || answer.status === 404) {
    throw new CheckFailed(
      `Telegram answered ${answer.status} to getMe: the bot token is wrong or revoked. Copy it again from @BotFather (/mybots → API Token).`,
    );
  }
  const result = answer.body["result"] as { username?: string; id?: number } | undefined;
  if (answer.status !== 200 || !result?.username)
    throw new CheckFailed(`Telegram answered ${answer.status} to getMe.`);
  return { username: result.username, id: result.id ?? 0 };
}

/**
 * Waits for the first private message to the bot and returns its sender, then confirms the update so
 * the gateway does not answer it later. Undefined when none came before `timeoutMs`.
 * @throws CheckFailed when the bot has a webhook (getUpdates is refused then).
 */
export async function waitForTelegramOwner(
  apiRoot: string,
  token: string,
  timeoutMs: number,
): Promise<{ id: string; name: string } | undefined> {
  const deadline = Date.now() + timeoutMs;
  let offset: number | undefined;
  while (Date.now() < deadline) {
    const wait = Math.max(1, Math.min(25, Math.floor((deadline - Date.now()) / 1000)));
    const query = `timeout=${wait}${offset !== undefined ? `&offset=${offset}` : ""}`;
    const answer = await call("Telegram", `${trim(apiRoot)}/bot${token}/getUpdates?${query}`, {
      timeoutMs: (wait + 10) * 1000,
    });
    if (answer.status === 409) {
      // Telegram's 409: a webhook is set, or another process (a running gateway) is polling.
      throw new CheckFailed(
        `Telegram refused getUpdates (409: ${String(answer.body["description"] ?? "conflict")}): a webhook is set or a running gateway reads the bot's messages. Stop it, or give your user id instead (--telegram-owner).`,
      );
    }
    const updates = (answer.body["result"] ?? []) as {
      update_id: number;
      message?: { chat?: { type?: string }; from?: { id: number; first_name?: string; username?: string } };
    }[];
    for (const update of updates) {
      offset = update.update_id + 1;
      const from = update.message?.from;
      if (from && update.message?.chat?.type === "private") {
        await call("Telegram", `${trim(apiRoot)}/bot${token}/getUpdates?offset=${offset}&timeout=0`);
        const name = [from.first_name, from.username ? `@${from.username}` : ""].filter(Boolean).join(" ");
        return { id: String(from.id), name: name || String(from.id) };
      }
    }
  }
  return undefined;
}

/** Discord's GET /users/@me with the bot token: the bot's name. */
export async function checkDiscord(apiUrl: string, token: string): Promise<{ username: string; id: string }> {
  const answer = await call("Discord", `${trim(apiUrl)}/v10/users/@me`, {
    headers: { authorization: `Bot ${token}` },
  });
  if (answer.status === 401) {
    throw new CheckFailed(
      "Discord answered 401 to /users/@me: the bot token is wrong or was reset. Copy it again (Developer Portal → Bot → Reset Token).",
    );
  }
  if (answer.status !== 200) throw new CheckFailed(`Discord answered ${answer.status} to /users/@me.`);
  return { username: String(answer.body["username"] ?? "?"), id: String(answer.body["id"] ?? "") };
}

/** Slack's auth.test with the bot token: the workspace and the bot's user. */
export async function checkSlack(apiUrl: string, botToken: string): Promise<{ team: string; user: string }> {
  const url = `${apiUrl.endsWith("/") ? apiUrl : `${apiUrl}/`}auth.test`;
  const answer = await call("Slack", url, {
    method: "POST",
    headers: { authorization: `Bearer ${botToken}` },
  });
  if (answer.body["ok"] !== true) {
    throw new CheckFailed(
      `Slack's auth.test answered '${String(answer.body["error"] ?? answer.status)}': the bot token (xoxb-…) is wrong or revoked. Copy it from your app's OAuth & Permissions page.`,
    );
  }
  return { team: String(answer.body["team"] ?? "?"), user: String(answer.body["user"] ?? "?") };
}

/** Matrix's whoami with the access token: the account's user id. */
export async function checkMatrix(homeserver: string, accessToken: string): Promise<{ userId: string }> {
  const answer = await call("the Matrix homeserver", `${trim(homeserver)}/_matrix/client/v3/account/whoami`, {
    headers: { authorization: `Bearer ${accessToken}` },
  });
  if (answer.status === 401 || answer.status === 403) {
    throw new CheckFailed(
      `The homeserver answered ${answer.status} to whoami: the access token is wrong or logged out. Create a new one (Element: Settings → Help & About → Access Token).`,
    );
  }
  if (answer.status !== 200) throw new CheckFailed(`The homeserver answered ${answer.status} to whoami.`);
  return { userId: String(answer.body["user_id"] ?? "") };
}

/** signal-cli's HTTP daemon knows the account: `listGroups` for it answers. */
export async function checkSignal(httpUrl: string, account: string): Promise<{ groups: number }> {
  const answer = await call("signal-cli's daemon", `${trim(httpUrl)}/api/v1/rpc`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: "setup", method: "listGroups", params: { account } }),
  });
  const error = answer.body["error"] as { message?: string } | undefined;
  if (answer.status !== 200 || error) {
    throw new CheckFailed(
      `signal-cli answered listGroups for ${account} with ${error?.message ?? `HTTP ${answer.status}`}. Register or link the number in signal-cli first, and run \`signal-cli -a ${account} daemon --http ${new URL(httpUrl).host}\`.`,
    );
  }
  return { groups: Array.isArray(answer.body["result"]) ? answer.body["result"].length : 0 };
}

/** Mattermost accepts the bot's access token: `GET /api/v4/users/me` answers with the bot. */
export async function checkMattermost(url: string, token: string): Promise<{ username: string }> {
  const answer = await call("Mattermost", `${trim(url)}/api/v4/users/me`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (answer.status === 401) {
    throw new CheckFailed(
      "Mattermost answered 401 to users/me: the access token is wrong or revoked. Create one in Integrations → Bot Accounts (or Profile → Security → Personal Access Tokens).",
    );
  }
  if (answer.status !== 200 || typeof answer.body["username"] !== "string") {
    throw new CheckFailed(
      `Mattermost answered ${answer.status} to GET /api/v4/users/me. Check the server address (the one you open in the browser, without /api/v4).`,
    );
  }
  return { username: answer.body["username"] };
}

/** The IRC server accepts a connection (TCP, or TLS with a valid certificate). */
export async function checkIrc(host: string, port: number, tls: boolean): Promise<void> {
  const { connect: tcp } = await import("node:net");
  const { connect: tlsConnect } = await import("node:tls");
  await new Promise<void>((resolve, reject) => {
    const fail = (reason: string) =>
      reject(
        new CheckFailed(
          `Cannot connect to the IRC server ${host}:${port}${tls ? " (TLS)" : ""}: ${reason}. Check the server, port and TLS setting.`,
        ),
      );
    const socket = tls
      ? tlsConnect({ host, port, servername: host }, () => {
          socket.destroy();
          resolve();
        })
      : tcp({ host, port }, () => {
          socket.destroy();
          resolve();
        });
    socket.setTimeout(TIMEOUT_MS, () => {
      socket.destroy();
      fail("no answer");
    });
    socket.on("error", (err: NodeJS.ErrnoException) => fail(err.code ?? err.message));
  });
}

export interface MailSettings {
  address: string;
  password: string;
  imapHost: string;
  imapPort: number;
  smtpHost: string;
  smtpPort: number;
  tls: boolean;
}

/** Logs in to IMAP and verifies SMTP with the same settings the email adapter uses. */
export async function checkEmail(settings: MailSettings): Promise<void> {
  const { ImapFlow } = await import("imapflow");
  const implicitImap = settings.tls && settings.imapPort === 993;
  const imap = new ImapFlow({
    host: settings.imapHost,
    port: settings.imapPort,
    secure: implicitImap,
    doSTARTTLS: settings.tls && !implicitImap,
    auth: { user: settings.address, pass: settings.password },
    logger: false,
    connectionTimeout: TIMEOUT_MS,
    greetingTimeout: TIMEOUT_MS,
  });
  imap.on("error", () => {});
  try {
    await imap.connect();
  } catch (err) {
    const auth = (err as { authenticationFailed?: boolean }).authenticationFailed;
    throw new CheckFailed(
      auth
        ? `IMAP login to ${settings.imapHost} was refused: check the address and password (many providers need an app password).`
        : `Cannot connect to IMAP at ${settings.imapHost}:${settings.imapPort} (${(err as Error).message}). Check the host, port and TLS.`,
    );
  } finally {
    await imap.logout().catch(() => imap.close());
  }
  const nodemailer = (await import("nodemailer")).default;
  const implicitSmtp = settings.tls && settings.smtpPort === 465;
  const smtp = nodemailer.createTransport({
    host: settings.smtpHost,
    port: settings.smtpPort,
    secure: implicitSmtp,
    requireTLS: settings.tls && !implicitSmtp,
    ignoreTLS: !settings.tls,
    auth: { user: settings.address, pass: settings.password },
    connectionTimeout: TIMEOUT_MS,
    greetingTimeout: TIMEOUT_MS,
  });
  try {
    await smtp.verify();
  } catch (err) {
    throw new CheckFailed(
      `SMTP at ${settings.smtpHost}:${settings.smtpPort} refused (${(err as Error).message}). Check the host, port, TLS and password.`,
    );
  } finally {
    smtp.close();
  }
}
