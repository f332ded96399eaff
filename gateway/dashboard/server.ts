/**
 * The dashboard's request handling: login, CSRF, the pages and their forms, live updates over SSE.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { describeError, HeraldError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { Activity } from "./activity.js";
import { CSS, JS } from "./assets.js";
import { type AuthState, DashboardAuth } from "./auth.js";
import { html, type SafeHtml } from "./html.js";
import { loginPage, type PageFrame, page, refusedPage } from "./layout.js";
import { accessFragment } from "./page-access.js";
import { cronFragment, RUNS_SHOWN } from "./page-cron.js";
import { knowledgeBody, skillBody } from "./page-knowledge.js";
import { logsFragment } from "./page-logs.js";
import { overviewFragment } from "./page-overview.js";
import {
  exportJson,
  exportMarkdown,
  SESSIONS_SHOWN,
  sessionsFragment,
  transcriptBody,
} from "./page-sessions.js";
import { sessionUsage, usageBody } from "./page-usage.js";
import type { DashboardAccess, DashboardSources } from "./types.js";
import { UsageRollup } from "./usage-rollup.js";

/** What `createDashboard` needs. */
export interface DashboardOptions {
  sources: DashboardSources;
  activity: Activity;
  access: DashboardAccess;
  logger: Logger;
  /** @defaultValue Date.now */
  now?: () => number;
}

/** The dashboard as a route of the gateway's HTTP server. */
export interface Dashboard {
  /** Handles `/dashboard` and below; false for any other path. */
  handleHttp(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean>;
  /** Ends the live-update streams (before the server closes). */
  close(): void;
}

type Ok = Extract<AuthState, { kind: "ok" }>;

/** Largest form body accepted (a skill's SKILL.md). */
const MAX_FORM_BYTES = 512 * 1024;
const HEARTBEAT_MS = 20_000;
/** Lines of the log tail. */
const LOG_LINES = 300;
const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
};

/** Builds the dashboard. */
export function createDashboard(options: DashboardOptions): Dashboard {
  const { sources, activity } = options;
  const now = options.now ?? Date.now;
  const auth = new DashboardAuth(options.access, now);
  const log = options.logger.child({ component: "dashboard" });
  /** The further agent a skills page is of (`?agent=`, a form's `agent`); undefined: the shared folder. */
  const skillsAgent = (name: string | undefined) =>
    name && sources.agentSkills && sources.agents?.includes(name) ? name : undefined;
  const skillsOf = (agent: string | undefined) =>
    agent && sources.agentSkills ? sources.agentSkills(agent) : sources.skills;
  const flashes = new Map<string, { text: string; error: boolean }>();
  /** Open live streams and the login each belongs to (ended with it). */
  const streams = new Map<ServerResponse, string | undefined>();
  const usageRollup = sources.usage ? new UsageRollup(sources.usage, now) : undefined;

  const send = (
    res: ServerResponse,
    status: number,
    body: string | SafeHtml,
    type = "text/html; charset=utf-8",
  ) => {
    res.writeHead(status, { ...SECURITY_HEADERS, "content-type": type });
    res.end(String(body));
  };
  const redirect = (res: ServerResponse, to: string, headers: Record<string, string> = {}) => {
    res.writeHead(303, { ...SECURITY_HEADERS, location: to, ...headers });
    res.end();
  };
  /** Back to `to` with a message shown once. */
  const back = (res: ServerResponse, to: string, text: string, error = false) => {
    const id = randomBytes(9).toString("base64url");
    flashes.set(id, { text, error });
    while (flashes.size > 200) flashes.delete(flashes.keys().next().value!);
    redirect(res, `${to}${to.includes("?") ? "&" : "?"}flash=${id}`);
  };

  const frame = (state: Ok, url: URL, f: Omit<PageFrame, "csrf" | "loggedIn" | "flash">): SafeHtml => {
    const id = url.searchParams.get("flash");
    const flash = id ? flashes.get(id) : undefined;
    if (id) flashes.delete(id);
    return page({ ...f, csrf: state.csrf, loggedIn: auth.loginRequired, flash });
  };

  /** A page whose body the live updates refresh: the fragment alone with `?fragment=1`. */
  const livePage = (
    res: ServerResponse,
    state: Ok,
    url: URL,
    f: Omit<PageFrame, "csrf" | "loggedIn" | "flash" | "body" | "live">,
    fragment: SafeHtml,
  ) => {
    if (url.searchParams.get("fragment") === "1") return send(res, 200, fragment);
    send(res, 200, frame(state, url, { ...f, body: fragment, live: true }));
  };

  async function get(req: IncomingMessage, res: ServerResponse, state: Ok, url: URL, sub: string) {
    if (sub === "" || sub === "/") {
      const queue = await sources.queue();
      return livePage(
        res,
        state,
        url,
        { title: "Overview", nav: "" },
        overviewFragment({
          adapters: sources.adapters(),
          queue,
          activity,
          activeSessions: sources.activeSessions(),
          pendingPairing: sources.pairing.pending().length,
          now: now(),
        }),
      );
    }
    if (sub === "/events") return stream(req, res, state.sessionId);
    if (sub === "/sessions") {
      const query = (url.searchParams.get("q") ?? "").trim().slice(0, 200);
      const hits = query ? sources.search(query, 50) : undefined;
      const agents = sources.agents?.length ? ["default", ...sources.agents] : [];
      const wanted = url.searchParams.get("agent") ?? "";
      const agent = agents.includes(wanted) ? wanted : undefined;
      const sessions = hits
        ? []
        : sources.sessions.list({ limit: SESSIONS_SHOWN, ...(agent ? { agent } : {}) });
      return livePage(
        res,
        state,
        url,
        { title: "Sessions", nav: "sessions" },
        sessionsFragment({ query, sessions, hits, agents, agent, now: now() }),
      );
    }
    const session = /^\/sessions\/([A-Za-z0-9_-]+)(\/export)?$/.exec(sub);
    if (session) {
      const found = sources.sessions.get(session[1]!);
      if (!found) return send(res, 404, frame(state, url, notFound("No such session.", "sessions")));
      const messages = sources.sessions.load(found.id);
      if (session[2]) {
        const md = url.searchParams.get("format") === "md";
        res.writeHead(200, {
          ...SECURITY_HEADERS,
          "content-type": md ? "text/markdown; charset=utf-8" : "application/json",
          "content-disposition": `attachment; filename="session-${found.id}.${md ? "md" : "json"}"`,
        });
        res.end(md ? exportMarkdown(found, messages) : exportJson(found, messages));
        return;
      }
      return send(
        res,
        200,
        frame(state, url, {
          title: found.title ?? `Session ${found.key}`,
          nav: "sessions",
          body: html`${transcriptBody(found, messages, state.csrf)}${sessionUsage(sources.usage?.forSession(found.id) ?? [])}`,
        }),
      );
    }
    if (sub === "/access") {
      return livePage(
        res,
        state,
        url,
        { title: "Pairing & approvals", nav: "access" },
        accessFragment({
          pairing: sources.pairing.pending(),
          approvals: sources.approvals?.pending(),
          csrf: state.csrf,
          now: now(),
        }),
      );
    }
    if (sub === "/cron") {
      const body = sources.cron
        ? cronFragment(sources.cron.list(RUNS_SHOWN), state.csrf)
        : html`<p class="muted">Cron is not available in this process.</p>`;
      return livePage(res, state, url, { title: "Cron jobs", nav: "cron" }, body);
    }
    if (sub === "/knowledge") {
      const memory = sources.memory
        ? await Promise.all([sources.memory.read("memory"), sources.memory.read("user")])
        : undefined;
      const agent = skillsAgent(url.searchParams.get("agent") ?? undefined);
      const skills = await skillsOf(agent)?.list();
      const users = await sources.userMemory?.();
      const agents = sources.agentSkills ? (sources.agents ?? []) : [];
      return send(
        res,
        200,
        frame(state, url, {
          title: "Skills & memory",
          nav: "knowledge",
          body: knowledgeBody({ memory, users, skills, agents, agent, csrf: state.csrf }),
        }),
      );
    }
    if (sub === "/usage") {
      const body =
        sources.usage && usageRollup
          ? await usageBody(url.searchParams, sources.usage, usageRollup, sources.agents ?? [], now())
          : html`<p class="muted">Usage is not recorded in this process.</p>`;
      return livePage(res, state, url, { title: "Usage", nav: "usage" }, body);
    }
    if (sub === "/logs") {
      const level = Number(url.searchParams.get("level") ?? 30);
      return livePage(
        res,
        state,
        url,
        { title: "Logs", nav: "logs" },
        logsFragment(sources.logTail?.(LOG_LINES), [30, 40, 50].includes(level) ? level : 30),
      );
    }
    const skill = /^\/skills\/([^/]+)$/.exec(sub);
    const agent = skillsAgent(url.searchParams.get("agent") ?? undefined);
    const store = skillsOf(agent);
    if (skill && store) {
      const name = decodeURIComponent(skill[1]!);
      if (name === "new") {
        const template =
          "---\nname: my-skill\ndescription: What it does and when to use it.\n---\n\n# Steps\n\n1. \n";
        return send(
          res,
          200,
          frame(state, url, {
            title: "New skill",
            nav: "knowledge",
            body: skillBody({ name: "", content: template, isNew: true, agent, csrf: state.csrf }),
          }),
        );
      }
      const viewed = await store.view(name);
      if (!viewed.ok) return send(res, 404, frame(state, url, notFound(viewed.error, "knowledge")));
      return send(
        res,
        200,
        frame(state, url, {
          title: `Skill ${name}`,
          nav: "knowledge",
          body: skillBody({
            name,
            content: skillFileOf(viewed.message),
            isNew: false,
            agent,
            csrf: state.csrf,
          }),
        }),
      );
    }
    send(res, 404, frame(state, url, notFound("No such page.", "")));
  }

  async function post(res: ServerResponse, state: Ok, sub: string, form: URLSearchParams) {
    if (sub === "/logout") {
      for (const [stream, login] of streams) if (login === state.sessionId) stream.end();
      return redirect(res, "/dashboard/login", { "set-cookie": auth.logout(state.sessionId) });
    }
    const reset = /^\/sessions\/([A-Za-z0-9_-]+)\/reset$/.exec(sub);
    if (reset) {
      const session = sources.sessions.get(reset[1]!);
      if (!session) return back(res, "/dashboard/sessions", "No such session.", true);
      const done = sources.resetSession(session.key);
      return back(
        res,
        `/dashboard/sessions/${session.id}`,
        done ? "Session reset: the next message starts a fresh one." : "This session had already ended.",
        !done,
      );
    }
    const pairing = /^\/pairing\/(approve|deny)$/.exec(sub);
    if (pairing) {
      const platform = form.get("platform") ?? "";
      const userId = form.get("userId") ?? "";
      const who = `${platform}:${userId}`;
      if (pairing[1] === "approve") {
        const ok = sources.pairing.approve(platform, userId);
        log.info({ platform, userId }, "pairing approved from the dashboard");
        return back(res, "/dashboard/access", ok ? `Approved ${who}.` : `No pending request of ${who}.`, !ok);
      }
      const ok = sources.pairing.deny(platform, userId);
      return back(res, "/dashboard/access", ok ? `Denied ${who}.` : `No pending request of ${who}.`, !ok);
    }
    const approval = /^\/approvals\/(approve|deny)$/.exec(sub);
    if (approval && sources.approvals) {
      const key = form.get("sessionKey") ?? "";
      const ok = sources.approvals.answer(key, approval[1] === "approve");
      log.info({ sessionKey: key, decision: approval[1] }, "approval answered from the dashboard");
      return back(
        res,
        "/dashboard/access",
        ok
          ? `${approval[1] === "approve" ? "Approved" : "Denied"}; the agent was told.`
          : "Nothing is waiting there.",
        !ok,
      );
    }
    const cron = /^\/cron\/([A-Za-z0-9_-]+)\/(run|pause|resume|remove)$/.exec(sub);
    if (cron && sources.cron) {
      const [, id, what] = cron as unknown as [string, string, string];
      const ok =
        what === "run"
          ? await sources.cron.runNow(id)
          : what === "remove"
            ? await sources.cron.remove(id)
            : await sources.cron.setPaused(id, what === "pause");
      const text = { run: "Run queued", pause: "Paused", resume: "Resumed", remove: "Removed" }[what];
      return back(res, "/dashboard/cron", ok ? `${text}: ${id}.` : `No job ${id}.`, !ok);
    }
    const memory = /^\/memory\/(add|remove)$/.exec(sub);
    if (memory && sources.memory) {
      const target = form.get("target") === "user" ? "user" : "memory";
      const result =
        memory[1] === "add"
          ? await sources.memory.add(target, form.get("content") ?? "")
          : await sources.memory.remove(target, form.get("oldText") ?? "");
      return back(res, "/dashboard/knowledge", result.ok ? result.message : result.error, !result.ok);
    }
    const skill = /^\/skills\/([^/]+)(\/delete)?$/.exec(sub);
    const agent = skillsAgent(form.get("agent") ?? undefined);
    const store = skillsOf(agent);
    if (skill && store) {
      const isNew = skill[1] === "new";
      const name = isNew ? (form.get("name") ?? "").trim() : decodeURIComponent(skill[1]!);
      const content = (form.get("content") ?? "").replace(/\r\n/g, "\n");
      // An existing skill (the user's, or a bundled one the user makes their own version of) is patched.
      const result = skill[2]
        ? await store.manage({ action: "delete", name })
        : await store.manage({ action: isNew ? "create" : "patch", name, content });
      if (!result.ok && !skill[2]) {
        // Refused: the form again with what was typed, and the reason.
        return send(
          res,
          422,
          page({
            title: isNew ? "New skill" : `Skill ${name}`,
            nav: "knowledge",
            csrf: state.csrf,
            loggedIn: auth.loginRequired,
            flash: { text: result.error, error: true },
            body: skillBody({ name, content, isNew, agent, csrf: state.csrf }),
          }),
        );
      }
      const of = agent ? `?agent=${encodeURIComponent(agent)}` : "";
      const to =
        skill[2] && result.ok
          ? `/dashboard/knowledge${of}`
          : `/dashboard/skills/${encodeURIComponent(name)}${of}`;
      return back(res, to, result.ok ? result.message : result.error, !result.ok);
    }
    back(res, "/dashboard/", "Unknown action.", true);
  }

  /** `GET /dashboard/events`: every activity event as an SSE event of its type. */
  function stream(req: IncomingMessage, res: ServerResponse, login: string | undefined) {
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      "content-type": "text/event-stream; charset=utf-8",
      connection: "keep-alive",
    });
    res.write("retry: 3000\n\n");
    streams.set(res, login);
    const unsubscribe = activity.subscribe((event) => {
      res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    });
    // A login that expired ends its stream at the next heartbeat.
    const heartbeat = setInterval(() => {
      if (auth.check(req).kind === "ok") res.write(": keep-alive\n\n");
      else res.end();
    }, HEARTBEAT_MS);
    heartbeat.unref();
    req.on("close", () => {
      clearInterval(heartbeat);
      unsubscribe();
      streams.delete(res);
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const url = new URL(req.url ?? "/", "http://dashboard.invalid");
    const sub = path.slice("/dashboard".length);
    const method = req.method ?? "GET";
    if (method === "GET" && sub === "/assets/app.css") return send(res, 200, CSS, "text/css; charset=utf-8");
    if (method === "GET" && sub === "/assets/app.js")
      return send(res, 200, JS, "text/javascript; charset=utf-8");
    if (method !== "GET" && method !== "POST") return send(res, 405, "method not allowed", "text/plain");
    if (method === "POST" && !sameOrigin(req))
      return send(res, 403, refusedPage("This form came from another site (its Origin header differs)."));

    const state = auth.check(req);
    if (state.kind === "refused") return send(res, 403, refusedPage(state.reason));
    if (sub === "/login") {
      if (state.kind === "ok") return redirect(res, "/dashboard/");
      if (method === "GET") return send(res, 200, loginPage());
      const form = await readForm(req);
      const secure = req.headers["x-forwarded-proto"] === "https" || "encrypted" in req.socket;
      const result = auth.login(form.get("password") ?? "", req.socket.remoteAddress ?? "?", secure);
      if ("error" in result) {
        log.warn({ remote: req.socket.remoteAddress, status: result.status }, "dashboard login refused");
        return send(res, result.status, loginPage(result.error));
      }
      log.info({ remote: req.socket.remoteAddress }, "dashboard login");
      return redirect(res, "/dashboard/", { "set-cookie": result.cookie });
    }
    if (state.kind === "login") {
      if (method === "GET" && sub !== "/events") return redirect(res, "/dashboard/login");
      return send(res, 401, refusedPage("Log in first: /dashboard/login."));
    }
    if (method === "GET") return get(req, res, state, url, sub);
    const form = await readForm(req);
    const token = form.get("_csrf") ?? (req.headers["x-csrf-token"] as string | undefined);
    if (!auth.csrfValid(state, token ?? undefined)) {
      log.warn({ path }, "dashboard change refused: missing or wrong CSRF token");
      return send(res, 403, refusedPage("Missing or wrong CSRF token: reload the page and try again."));
    }
    return post(res, state, sub, form);
  }

  return {
    async handleHttp(req, res, path) {
      if (path !== "/dashboard" && !path.startsWith("/dashboard/")) return false;
      if (path === "/dashboard") {
        redirect(res, "/dashboard/");
        return true;
      }
      try {
        await handle(req, res, path);
      } catch (err) {
        const message = err instanceof HeraldError ? err.message : describeError(err);
        log.error({ error: describeError(err), path }, "dashboard request failed");
        if (!res.headersSent) send(res, err instanceof FormError ? 413 : 500, refusedPage(message));
        else res.end();
      }
      return true;
    },
    close() {
      for (const res of streams.keys()) res.end();
      streams.clear();
    },
  };
}

function notFound(text: string, nav: PageFrame["nav"]): Omit<PageFrame, "csrf" | "loggedIn" | "flash"> {
  return { title: "Not found", nav, body: html`<p>${text}</p>` };
}

/** SKILL.md's text out of `skills.view`'s message (the file list after it is dropped). */
function skillFileOf(message: string): string {
  let text = message;
  for (const marker of ["\n\nNote: this skill cannot run here", "\n\n---\nSupporting files"]) {
    const cut = text.lastIndexOf(marker);
    if (cut >= 0) text = text.slice(0, cut);
  }
  return `${text}\n`;
}

class FormError extends HeraldError {
  constructor() {
    super("The form is too large.", { code: "invalid_input" });
    this.name = "FormError";
  }
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) throw new FormError();
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

/** A POST without Origin (curl, old browsers) passes; one whose Origin names another host does not. */
function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (!origin || origin === "null") return origin !== "null";
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}
