/**
 * The web chat's HTTP routes under `/chat`: the pages, their assets, the live stream, the JSON API
 * the script uses, uploads and downloads. Every change is a POST carrying the login's CSRF token (a
 * header; the login and invite forms, which have no login yet, are refused from other origins), and
 * every answer carries the strict CSP.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import type { Logger } from "../../core/logger.js";
import type { InboundAttachment } from "../../core/types.js";
import { FileTooLargeError } from "../shared/media.js";
import { webAssets } from "./assets.js";
import type { WebAuth } from "./auth.js";
import { isSecure, OWNER_ID, type WebLogin } from "./auth.js";
import type { ChatChannel, EventClock } from "./channel.js";
import type { WebFiles } from "./files.js";
import { isAudio, isInline } from "./files.js";
import { chatPage, esc, invitePage, loginPage, refusedPage, SECURITY_HEADERS } from "./page.js";
import type { WebChatServices, WebFile } from "./types.js";

/** What the routes use of the adapter. */
export interface WebChatHost {
  readonly deps: { logger: Logger; services: WebChatServices };
  readonly auth: WebAuth;
  readonly files: WebFiles;
  readonly clock: EventClock;
  /** Whether the gateway runs the adapter (it takes messages). */
  readonly running: boolean;
  channel(userId: string): ChatChannel;
  /** Hands a typed message to the gateway; its outcome. @throws when it could not be recorded */
  submit(s: {
    userId: string;
    name: string;
    text: string;
    files?: WebFile[] | undefined;
    attachments?: InboundAttachment[] | undefined;
    viaButton?: boolean | undefined;
  }): Promise<string>;
}

const HEARTBEAT_MS = 20_000;
const MAX_FORM_BYTES = 16 * 1024;
const MAX_JSON_BYTES = 256 * 1024;
/** History entries a page reads at a time (a 1,000-message session opens in one such page). */
const HISTORY_PAGE = 40;

const sendSchema = z.strictObject({
  text: z.string().max(100_000),
  files: z.array(z.string().max(64)).max(10).optional(),
  /** The prompt whose button was clicked, and the button's label. */
  button: z.strictObject({ promptId: z.string().max(64), label: z.string().max(200) }).optional(),
});

type Json = Record<string, unknown>;

/** Builds the route handler of `adapter`. */
export function webRoutes(adapter: WebChatHost) {
  const log: Logger = adapter.deps.logger;
  const { services } = adapter.deps;

  const json = (res: ServerResponse, status: number, body: unknown): true => {
    res.writeHead(status, { ...SECURITY_HEADERS, "content-type": "application/json; charset=utf-8" });
    res.end(JSON.stringify(body));
    return true;
  };
  const page = (res: ServerResponse, status: number, html: string, headers: Json = {}): true => {
    res.writeHead(status, { ...SECURITY_HEADERS, "content-type": "text/html; charset=utf-8", ...headers });
    res.end(html);
    return true;
  };
  const redirect = (res: ServerResponse, to: string, headers: Json = {}): true => {
    res.writeHead(303, { ...SECURITY_HEADERS, location: to, ...headers });
    res.end();
    return true;
  };

  /** The JSON API, for a logged-in user. */
  async function api(req: IncomingMessage, res: ServerResponse, login: WebLogin, sub: string, url: URL) {
    const chat = { platform: "webchat", chatId: login.userId };
    if (req.method === "GET") {
      if (sub === "history") return json(res, 200, history(login, url));
      if (sub === "sessions") return json(res, 200, { sessions: services.chat.sessions(chat) });
      if (sub === "commands") return json(res, 200, { commands: services.commands(login.userId) });
      if (sub === "status") return json(res, 200, await services.chat.status(chat));
      if (sub === "search") {
        const q = (url.searchParams.get("q") ?? "").trim().slice(0, 200);
        return json(res, 200, { hits: q ? services.search(chat, q, 30) : [] });
      }
      return json(res, 404, { error: "no such route" });
    }
    if (req.method !== "POST") return json(res, 405, { error: "GET or POST" });
    if (!adapter.auth.csrfValid(login, header(req, "x-csrf-token")))
      return json(res, 403, { error: "Missing or wrong CSRF token: reload the page." });
    if (sub === "upload") return upload(req, res, login);
    if (sub === "send") return send(req, res, login);
    if (sub === "invite") {
      if (!services.isOwner(login.userId)) return json(res, 403, { error: "Only the owner invites." });
      const body = z.object({ name: z.string().trim().min(1).max(60) }).safeParse(await readJson(req));
      if (!body.success) return json(res, 400, { error: "Give the person's name (1–60 characters)." });
      const { token, expiresAt } = adapter.auth.invite(body.data.name);
      return json(res, 200, { path: `/chat/invite/${token}`, expiresAt });
    }
    return json(res, 404, { error: "no such route" });
  }

  /** A page of history with the state of the live stream at the same moment. */
  function history(login: WebLogin, url: URL) {
    const before = Number(url.searchParams.get("before"));
    const chat = { platform: "webchat", chatId: login.userId };
    const pageOf = services.history(chat, {
      beforeSeq: Number.isInteger(before) && before > 0 ? before : undefined,
      limit: HISTORY_PAGE,
    });
    const channel = adapter.channel(login.userId);
    const inHistory = new Set(pageOf.entries.map((e) => e.turnId));
    return {
      ...pageOf,
      cursor: `${adapter.clock.boot}.${adapter.clock.now}`,
      running: [...channel.running.values()].map((t) => ({ ...t, committed: inHistory.has(t.turnId) })),
      prompts: [...channel.prompts.values()],
    };
  }

  async function send(req: IncomingMessage, res: ServerResponse, login: WebLogin) {
    const parsed = sendSchema.safeParse(await readJson(req));
    if (!parsed.success) return json(res, 400, { error: "Send {text, files?}." });
    const { text, button } = parsed.data;
    const taken = (parsed.data.files ?? []).map((id) => adapter.files.take(id, login.userId));
    if (taken.some((t) => !t)) return json(res, 400, { error: "An attached file is gone; attach it again." });
    if (!text.trim() && taken.length === 0) return json(res, 400, { error: "Nothing to send." });
    if (button) {
      const prompt = adapter.channel(login.userId).prompts.get(button.promptId);
      if (prompt)
        adapter
          .channel(login.userId)
          .emit("settle", { id: prompt.id, text: `${prompt.text}\n\n→ *${button.label}*` });
    }
    try {
      const outcome = await adapter.submit({
        userId: login.userId,
        name: login.name,
        text,
        files: taken.map((t) => t!.file),
        attachments: taken.length ? taken.map((t) => t!.attachment) : undefined,
        viaButton: button !== undefined,
      });
      return json(res, 200, { outcome });
    } catch (err) {
      log.error({ err }, "web chat message could not be recorded");
      return json(res, 503, { error: "The gateway could not take the message; try again." });
    }
  }

  async function upload(req: IncomingMessage, res: ServerResponse, login: WebLogin) {
    let name: string;
    try {
      name = decodeURIComponent(header(req, "x-file-name") ?? "").slice(0, 200) || "file";
    } catch {
      return json(res, 400, { error: "X-File-Name must be URI-encoded." });
    }
    const type = (header(req, "content-type") ?? "").split(";")[0]!.trim() || undefined;
    try {
      const voice = header(req, "x-voice-note") === "1";
      const id = await adapter.files.upload(req, login.userId, name, type, voice);
      return json(res, 200, { id, name });
    } catch (err) {
      if (err instanceof FileTooLargeError) return json(res, 413, { error: err.message });
      throw err;
    }
  }

  async function download(res: ServerResponse, login: WebLogin, token: string) {
    const file = adapter.files.find(token, login.userId);
    const size = file
      ? await stat(file.path).then(
          (s) => s.size,
          () => undefined,
        )
      : undefined;
    if (!file || size === undefined) return json(res, 404, { error: "No such file (or it was cleaned up)." });
    const inline = isInline(file.mimeType);
    const audio = isAudio(file.mimeType);
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      "content-security-policy": "default-src 'none'; sandbox",
      "content-type": inline || audio ? file.mimeType! : "application/octet-stream",
      "content-length": size,
      "content-disposition": `${inline ? "inline" : "attachment"}; filename*=UTF-8''${encodeURIComponent(file.name)}`,
      "cache-control": "private, max-age=3600",
    });
    createReadStream(file.path).pipe(res);
    return true;
  }

  function events(req: IncomingMessage, res: ServerResponse, login: WebLogin, url: URL) {
    const after = header(req, "last-event-id") ?? url.searchParams.get("after") ?? "";
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      "content-type": "text/event-stream; charset=utf-8",
      "x-accel-buffering": "no",
      connection: "keep-alive",
    });
    res.write("retry: 1000\n\n");
    if (!adapter.channel(login.userId).attach(res, after)) {
      // The page's point in the stream is gone (a restart, or too long away): it reads the history again.
      res.end(`event: reset\ndata: {}\n\n`);
      return;
    }
    const beat = setInterval(() => res.write(": keep-alive\n\n"), HEARTBEAT_MS);
    beat.unref();
    res.on("close", () => clearInterval(beat));
  }

  function assets(req: IncomingMessage, res: ServerResponse, path: string): void {
    const all = webAssets();
    const name = path.startsWith(all.base) ? path.slice(all.base.length) : undefined;
    const asset = name ? all.files.get(name) : undefined;
    if (!asset) {
      res.writeHead(404, { ...SECURITY_HEADERS, "content-type": "text/plain" }).end("not found");
      return;
    }
    const gzip = /\bgzip\b/.test(header(req, "accept-encoding") ?? "");
    const body = gzip ? asset.gzip : asset.body;
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      "content-type": asset.type,
      "content-length": body.length,
      "cache-control": "public, max-age=31536000, immutable",
      vary: "Accept-Encoding",
      ...(gzip ? { "content-encoding": "gzip" } : {}),
    });
    res.end(body);
  }

  /** The forms without a login (password, invite): only from this site's own pages. */
  function sameOrigin(req: IncomingMessage): boolean {
    const origin = header(req, "origin");
    if (origin === undefined || origin === "null") return origin === undefined;
    return origin === `${isSecure(req) ? "https" : "http"}://${req.headers.host ?? ""}`;
  }

  async function unauthenticated(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
    const a = webAssets();
    if (path === "/chat/login" && req.method === "POST") {
      if (!sameOrigin(req)) return page(res, 403, loginPage(a, "Refused: a form from another site."));
      const form = new URLSearchParams(await readText(req, MAX_FORM_BYTES));
      const remote = req.socket.remoteAddress ?? "";
      const out = adapter.auth.login(form.get("password") ?? "", remote, isSecure(req));
      if ("error" in out) return page(res, out.status, loginPage(a, out.error));
      return redirect(res, "/chat", { "set-cookie": out.cookie });
    }
    const invite = /^\/chat\/invite\/([A-Za-z0-9_-]{20,100})$/.exec(path);
    if (invite) {
      const token = invite[1]!;
      if (req.method !== "POST") return page(res, 200, invitePage(a, token, adapter.auth.inviteValid(token)));
      if (!sameOrigin(req)) return page(res, 403, invitePage(a, token, false));
      const out = adapter.auth.redeem(token, isSecure(req), services.admit);
      if (!out) return page(res, 410, invitePage(a, token, false));
      return redirect(res, "/chat", { "set-cookie": out.cookie });
    }
    return false;
  }

  return async (req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> => {
    if (path !== "/chat" && !path.startsWith("/chat/")) return false;
    if (path.startsWith("/chat/assets/")) {
      assets(req, res, path);
      return true;
    }
    if (!adapter.running)
      return json(res, 503, { error: "The web chat is starting or stopping; retry shortly." });
    if (await unauthenticated(req, res, path)) return true;
    const state = adapter.auth.check(req);
    const a = webAssets();
    if (state.kind === "refused") return page(res, 403, refusedPage(a));
    if (state.kind === "login") {
      if (path === "/chat" || path === "/chat/") page(res, 200, loginPage(a));
      else json(res, 401, { error: "Log in first." });
      return true;
    }
    const { login } = state;
    const url = new URL(req.url ?? "/", "http://localhost");
    if (path === "/chat" || path === "/chat/") {
      const owner = services.isOwner(login.userId);
      page(
        res,
        200,
        chatPage(a, {
          name: login.name,
          csrf: login.csrf,
          owner,
          canLogout: login.id !== undefined,
          voice: services.voiceNotes,
        }),
      );
      return true;
    }
    if (path === "/chat/events" && req.method === "GET") {
      events(req, res, login, url);
      return true;
    }
    if (path === "/chat/logout" && req.method === "POST") {
      if (!adapter.auth.csrfValid(login, header(req, "x-csrf-token")))
        return json(res, 403, { error: "CSRF" });
      res.writeHead(204, { ...SECURITY_HEADERS, "set-cookie": adapter.auth.logout(login) }).end();
      return true;
    }
    const file = /^\/chat\/files\/([A-Za-z0-9_-]+)(?:\/[^/]*)?$/.exec(path);
    if (file && req.method === "GET") {
      await download(res, login, file[1]!);
      return true;
    }
    const route = /^\/chat\/api\/([a-z]+)$/.exec(path);
    if (route) {
      await api(req, res, login, route[1]!, url);
      return true;
    }
    json(res, 404, { error: `No route ${esc(req.method ?? "")} ${esc(path)}` });
    return true;
  };
}

export type { WebFile };
/** The owner's user id, for tests and the composition root. */
export { OWNER_ID };

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

async function readText(req: IncomingMessage, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw new Error("body too large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  try {
    return JSON.parse(await readText(req, MAX_JSON_BYTES));
  } catch {
    return undefined;
  }
}
