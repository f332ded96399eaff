/**
 * The browser of one process and its sessions: one browser (launched on the first call, closed when
 * no session has used it for `idleMs`), one incognito context per session (its own cookies and
 * storage, closed when the session ends or idles), at most `maxContexts` contexts (the least recently
 * used closes first) and `maxPages` tabs per session, and a memory cap that closes other sessions'
 * contexts when the browser's processes grow past it.
 */
import type { BrowserContext, Page } from "puppeteer-core";
import { describeError, HeraldError } from "../../../core/errors.js";
import type { Logger } from "../../../core/logger.js";
import type { BrowserHandle } from "./launch.js";
import { treeMemory } from "./memory.js";
import type { ProfileStore } from "./profiles.js";
import type { RefTarget } from "./snapshot.js";

/** One session's browser: its context, tabs, the refs of its latest snapshot and its console. */
export interface BrowserSession {
  readonly key: string;
  /** The session (of the key) that opened it: a later session of the key gets a context of its own. */
  readonly sessionId: string | undefined;
  /** The user whose profile it loads and saves (`browser.persist_profile`). */
  readonly userKey: string | undefined;
  readonly context: BrowserContext;
  /** The tab the tools act on. */
  page: Page;
  /** Refs of the latest snapshot of `page`. */
  refs: Map<string, RefTarget>;
  /** The refs of the latest snapshot by element (an element keeps its ref in the next snapshot). */
  refIds: Map<string, string>;
  /** A tab the page opened, being made the current one (the next report waits for it). */
  adopting?: Promise<void> | undefined;
  /** The latest console messages and page errors (at most 100). */
  console: string[];
  lastUsedAt: number;
}

/** Options of `BrowserPool`. */
export interface BrowserPoolOptions {
  /** Opens the browser (launch or connect); called again after it closed. */
  open(): Promise<BrowserHandle>;
  /** The pages' proxy every context uses. */
  proxyUrl: string;
  maxContexts: number;
  maxPages: number;
  maxMemoryBytes: number;
  idleMs: number;
  navigationTimeoutMs: number;
  /** Keeps each user's cookies across sessions (`browser.persist_profile`); absent: none kept. */
  profiles?: ProfileStore | undefined;
  logger: Logger;
}

/** See the module comment. */
export class BrowserPool {
  readonly #options: BrowserPoolOptions;
  readonly #log: Logger;
  readonly #sessions = new Map<string, Promise<BrowserSession>>();
  #browser: Promise<BrowserHandle> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #lastUsedAt = Date.now();
  #closed = false;

  constructor(options: BrowserPoolOptions) {
    this.#options = options;
    this.#log = options.logger.child({ component: "browser" });
  }

  /**
   * The session's browser, opened on first use (and the browser with it). A context another session
   * of the key opened (the session ended, its end not handled yet) is closed first.
   */
  async session(key: string, sessionId?: string, userKey?: string): Promise<BrowserSession> {
    if (this.#closed) throw new HeraldError("the browser is shutting down", { code: "tool_error" });
    this.#lastUsedAt = Date.now();
    let entry = this.#sessions.get(key);
    if (entry && sessionId !== undefined) {
      const open = await entry.catch(() => undefined);
      if (open && open.sessionId !== sessionId) {
        await this.closeSession(key, "a new session of the chat", open.sessionId);
        entry = this.#sessions.get(key);
      }
    }
    if (!entry) {
      entry = this.#open(key, sessionId, userKey);
      this.#sessions.set(key, entry);
      entry.catch(() => this.#sessions.delete(key));
    }
    const session = await entry;
    session.lastUsedAt = Date.now();
    return session;
  }

  /** Whether the session has an open context. */
  has(key: string): boolean {
    return this.#sessions.has(key);
  }

  /** Keys of the open sessions, least recently used first. */
  async openSessions(): Promise<string[]> {
    const all = await Promise.all([...this.#sessions.values()].map((p) => p.catch(() => undefined)));
    return all
      .filter((s): s is BrowserSession => s !== undefined)
      .sort((a, b) => a.lastUsedAt - b.lastUsedAt)
      .map((s) => s.key);
  }

  async #open(
    key: string,
    sessionId: string | undefined,
    userKey: string | undefined,
  ): Promise<BrowserSession> {
    await this.#makeRoom(key);
    const handle = await this.#handle();
    const context = await handle.newContext(this.#options.proxyUrl);
    const profiles = this.#options.profiles;
    if (profiles && userKey) {
      const cookies = await profiles.load(userKey);
      if (cookies.length > 0)
        await context.setCookie(...cookies).catch((err: unknown) => {
          this.#log.warn({ error: describeError(err) }, "the saved browser profile did not load");
        });
    }
    const page = await context.newPage();
    const session: BrowserSession = {
      key,
      sessionId,
      userKey,
      context,
      page,
      refs: new Map(),
      refIds: new Map(),
      console: [],
      lastUsedAt: Date.now(),
    };
    this.#watch(session, page);
    context.on("targetcreated", (target) => {
      if (target.type() !== "page") return;
      const adopting = target.page().then(async (opened) => {
        if (opened && opened !== session.page) await this.#adopt(session, opened);
      });
      session.adopting = adopting.catch(() => undefined);
    });
    this.#log.info({ session: key }, "browser context opened");
    return session;
  }

  /** A tab the page opened (a popup): kept within the cap, and made the current one. */
  async #adopt(session: BrowserSession, page: Page): Promise<void> {
    const pages = await session.context.pages();
    if (pages.length > this.#options.maxPages) {
      await page.close().catch(() => undefined);
      session.console.push(
        `[herald] a new tab was closed: at most ${this.#options.maxPages} tabs per session`,
      );
      return;
    }
    this.#watch(session, page);
    session.page = page;
    session.refs = new Map();
    session.refIds = new Map();
    await page
      .waitForFunction(() => document.readyState === "complete", {
        timeout: this.#options.navigationTimeoutMs,
      })
      .catch(() => undefined);
  }

  #watch(session: BrowserSession, page: Page): void {
    page.setDefaultNavigationTimeout(this.#options.navigationTimeoutMs);
    page.setDefaultTimeout(Math.min(this.#options.navigationTimeoutMs, 10_000));
    const push = (line: string) => {
      session.console.push(line.length > 500 ? `${line.slice(0, 500)}…` : line);
      if (session.console.length > 100) session.console.shift();
    };
    page.on("console", (m) => push(`[${m.type()}] ${m.text()}`));
    page.on("pageerror", (e) => push(`[pageerror] ${e instanceof Error ? e.message : String(e)}`));
    // Chromium refuses pages' own navigations to file:, chrome: and data:; should one get through, the
    // tab leaves it at once (the tools open only http and https URLs).
    page.on("framenavigated", (frame) => {
      const url = frame.url();
      if (frame !== page.mainFrame() || /^(https?:|about:blank|blob:|chrome-error:)/.test(url)) return;
      push(`[herald] left ${url.slice(0, 60)}: only http and https pages are opened`);
      void page.goto("about:blank").catch(() => undefined);
    });
  }

  /** Opens the browser when closed; starts the idle sweep. */
  #handle(): Promise<BrowserHandle> {
    if (!this.#browser) {
      const opening = this.#options.open();
      this.#browser = opening;
      opening.then(
        (h) => {
          this.#log.info({ how: h.how }, "browser started");
          h.browser.once("disconnected", () => {
            if (this.#browser === opening) this.#browser = undefined;
            this.#sessions.clear();
          });
        },
        () => {
          if (this.#browser === opening) this.#browser = undefined;
        },
      );
      this.#timer ??= setInterval(() => void this.sweep(), Math.min(60_000, this.#options.idleMs / 2));
      this.#timer.unref();
    }
    return this.#browser;
  }

  /** Closes contexts past the cap (least recently used first) and past the memory cap. */
  async #makeRoom(forKey: string): Promise<void> {
    const open = (await this.openSessions()).filter((k) => k !== forKey);
    const excess = open.length + 1 - this.#options.maxContexts;
    for (const key of open.slice(0, Math.max(0, excess))) await this.closeSession(key, "the context cap");
    const memory = await this.memory();
    if (memory && memory.bytes > this.#options.maxMemoryBytes) {
      for (const key of open.slice(Math.max(0, excess))) {
        await this.closeSession(key, "the memory cap");
        const now = await this.memory();
        if (!now || now.bytes <= this.#options.maxMemoryBytes) break;
      }
    }
  }

  /** The launched browser's memory (PSS of its process tree); undefined for a remote browser. */
  async memory(): Promise<{ bytes: number; processes: number } | undefined> {
    const handle = await this.#browser?.catch(() => undefined);
    return handle?.pid ? treeMemory(handle.pid) : undefined;
  }

  /**
   * Closes a session's context (its tabs and cookies); with `sessionId`, only the context that session
   * opened. Idempotent; never throws.
   */
  async closeSession(key: string, why = "the session ended", sessionId?: string): Promise<void> {
    const entry = this.#sessions.get(key);
    if (!entry) return;
    const session = await entry.catch(() => undefined);
    if (sessionId !== undefined && session && session.sessionId !== sessionId) return;
    if (this.#sessions.get(key) !== entry) return;
    this.#sessions.delete(key);
    const profiles = this.#options.profiles;
    if (profiles && session?.userKey) {
      const saving = session.context
        .cookies()
        .then((cookies) => profiles.save(session.userKey as string, cookies));
      await saving.catch((err: unknown) => {
        this.#log.warn({ error: describeError(err) }, "the browser profile was not saved");
      });
    }
    await session?.context.close().catch((err: unknown) => {
      this.#log.warn({ error: describeError(err) }, "browser context did not close");
    });
    this.#log.info({ session: key, why }, "browser context closed");
  }

  /** Closes idle contexts, and the browser once nothing used it for the idle time. */
  async sweep(now = Date.now()): Promise<void> {
    const { idleMs } = this.#options;
    for (const [key, entry] of this.#sessions) {
      const session = await entry.catch(() => undefined);
      if (session && now - session.lastUsedAt >= idleMs) await this.closeSession(key, "idle");
    }
    if (this.#sessions.size === 0 && this.#browser && now - this.#lastUsedAt >= idleMs) {
      const handle = this.#browser;
      this.#browser = undefined;
      await (await handle.catch(() => undefined))?.close();
      this.#log.info({}, "browser closed: idle");
    }
  }

  /** Closes every context and the browser. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    for (const key of [...this.#sessions.keys()]) await this.closeSession(key, "shutdown");
    const handle = this.#browser;
    this.#browser = undefined;
    await (await handle?.catch(() => undefined))?.close();
  }
}
