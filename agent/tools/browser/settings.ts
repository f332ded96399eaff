/**
 * The `browser:` settings of the browser toolset: where Chromium is (or the remote browser to drive over
 * CDP), which private hosts pages may reach, the caps, and which actions wait for the user's approval;
 * their env names, reference rows and the doctor's line (how to install Chromium when it is missing).
 */
import { existsSync } from "node:fs";
import { z } from "zod";
import { type DoctorLine, defineFeature } from "../../../core/settings.js";
import type { VisionEndpoint } from "../vision/index.js";

/** Debian's and Ubuntu's path of the `chromium` package. */
export const DEFAULT_CHROMIUM = "/usr/bin/chromium";

/** The fix `herald doctor` and the start log give when Chromium is missing. */
export const INSTALL_CHROMIUM =
  "install Chromium (Debian/Ubuntu: apt-get install -y chromium) or set browser.executable (HERALD_BROWSER_PATH) to a Chromium or Chrome binary, or browser.cdp_url to a browser reachable over CDP";

/** Actions that may need the user's approval (`browser.approve`). */
export const APPROVABLE = ["submit", "download"] as const;

/** The `browser` section. */
export const browserSectionSchema = z
  .strictObject({
    /** The Chromium (or Chrome) binary launched on first use. */
    executable: z.string().min(1).default(DEFAULT_CHROMIUM),
    /** Drive a browser elsewhere over CDP (`ws://…` or `http://host:9222`) instead of launching one. */
    cdpUrl: z.url({ protocol: /^(wss?|https?)$/ }).optional(),
    /**
     * Private hosts pages may reach besides public addresses: `host` or `host:port` (a name as the
     * page asks for it, or an address it resolves to). Herald's own listeners stay refused.
     */
    allowPrivateHosts: z.array(z.string().min(1)).default([]),
    /** A session's browser context is closed after this many idle minutes (its cookies go with it). */
    idleMinutes: z.number().positive().default(10),
    /** Tabs one session may hold open. */
    maxPages: z.number().int().positive().default(4),
    /** Sessions with an open browser context per process; the least recently used is closed past it. */
    maxContexts: z.number().int().positive().default(8),
    /** Memory of the browser's processes (proportional set size), past which idle contexts are closed. */
    maxMemoryMb: z.number().int().positive().default(1024),
    /** How long a navigation may take. */
    navigationTimeoutMs: z.number().int().positive().default(30_000),
    /** Largest file `browser_download` saves. */
    downloadMaxBytes: z
      .number()
      .int()
      .positive()
      .default(50 * 1024 * 1024),
    /** Keep each user's cookies (their logins) across sessions, in HERALD_HOME/browser/profiles/. */
    persistProfile: z.boolean().default(false),
    /** Actions that wait for the user's approval when exec.dangerous_commands is `manual`. */
    approve: z.array(z.enum(APPROVABLE)).default([]),
  })
  .prefault({});

/** The parsed `browser` section. */
export type BrowserSection = z.output<typeof browserSectionSchema>;

/** The browser toolset: which browser it drives, or how to install one. */
export function checkBrowser(section: BrowserSection): DoctorLine {
  if (section.cdpUrl) return { ok: true, text: `browser: the browser at ${section.cdpUrl} (CDP)` };
  if (existsSync(section.executable))
    return { ok: true, text: `browser: ${section.executable} (launched on first use)` };
  return { ok: true, text: `browser: off (${section.executable} is missing)`, fix: INSTALL_CHROMIUM };
}

/** The browser toolset's settings. */
export const browserSettings = defineFeature({
  key: "browser",
  schema: browserSectionSchema,
  env: {
    HERALD_BROWSER_PATH: ["executable", "string"],
    HERALD_BROWSER_CDP_URL: ["cdp_url", "url"],
    HERALD_BROWSER_ALLOW_PRIVATE_HOSTS: ["allow_private_hosts", "list"],
    HERALD_BROWSER_APPROVE: ["approve", "list"],
    HERALD_BROWSER_PERSIST_PROFILE: ["persist_profile", "bool"],
  },
  reference: {
    intro:
      "The `browser` toolset drives a headless Chromium. Every request its pages make goes through Herald's " +
      "proxy, which applies `web_extract`'s address rules; see [Tools](tools.md#the-browser).",
    rows: [
      ["executable", "the Chromium binary; missing: the toolset is off", `\`${DEFAULT_CHROMIUM}\``],
      ["cdp_url", "drive the browser at this CDP endpoint instead of launching one", "none"],
      [
        "allow_private_hosts",
        "`host` or `host:port` entries pages may reach although private or loopback (`web.allow_private: true` allows all)",
        "none",
      ],
      ["idle_minutes", "a session's browser context (its tabs and cookies) closes after this idle time"],
      ["max_pages", "tabs per session"],
      ["max_contexts", "sessions with an open browser per process (the least recently used closes)"],
      ["max_memory_mb", "the browser's processes' memory (PSS) past which other sessions' contexts close"],
      ["navigation_timeout_ms", ""],
      [
        "persist_profile",
        "keep each user's cookies (logins) across their sessions, in `HERALD_HOME/browser/profiles/` (mode 0600)",
      ],
      ["download_max_bytes", "largest file `browser_download` saves", "`52428800` (50 MB)"],
      [
        "approve",
        "`submit` (sending a form by POST), `download`: wait for `/approve` when `exec.dangerous_commands` is `manual`",
        "none",
      ],
    ],
  },
  doctor: (section) => [checkBrowser(section)],
});

/** The settings the browser tools read (`HeraldConfig` has this shape). */
export interface BrowserSettings {
  browser: BrowserSection;
  web: { allowPrivate: boolean };
  exec: { dangerousCommands: "manual" | "deny" | "off" };
  vision?: VisionEndpoint | undefined;
  /** `HERALD_HOME`: where `browser.persist_profile` keeps the users' cookies. */
  homeDir?: string | undefined;
}
