/**
 * The browser toolset against real Chromium (Debian's, through puppeteer-core) and a fixture site on
 * 127.0.0.1, which `browser.allow_private_hosts` allows for its port only. A second server on another
 * loopback port stands for an address pages may not reach: its connection count must stay 0 whatever
 * the pages try (a redirect, subresources, fetch, a WebSocket).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkspaceAccess, WorkspaceManager } from "../../agent/exec/index.js";
import { type BrowserTools, createBrowserTools } from "../../agent/tools/browser/index.js";
import { browserSectionSchema } from "../../agent/tools/browser/settings.js";
import type { Tool, ToolContext, ToolOutput } from "../../agent/types.js";
import { silentLogger } from "../../core/logger.js";
import { type FakeSite, startFakeSite } from "../fakes/site/index.js";
import { type EchoServer, startEchoServer } from "../fakes/web/echo.js";
import { launchChromium } from "../helpers/chromium.js";

let site: FakeSite;
let refused: EchoServer;
let browser: BrowserTools;
let rootDir: string;

beforeAll(async () => {
  refused = await startEchoServer();
  site = await startFakeSite(refused.url);
  rootDir = mkdtempSync(join(tmpdir(), "herald-browser-ws-"));
  const workspaces = new WorkspaceManager({ rootDir, scope: "session" });
  browser = createBrowserTools(
    {
      browser: browserSectionSchema.parse({
        allowPrivateHosts: [`127.0.0.1:${site.port}`],
        downloadMaxBytes: 1024 * 1024,
      }),
      web: { allowPrivate: false },
      exec: { dangerousCommands: "manual" },
    },
    { access: new WorkspaceAccess({ workspaces }), logger: silentLogger(), unavailable: [] },
  );
});

afterAll(async () => {
  await browser?.close();
  await site?.close();
  await refused?.close();
});

function ctxFor(sessionKey: string, userId = "u1"): ToolContext {
  return {
    signal: new AbortController().signal,
    origin: {
      sessionId: sessionKey,
      sessionKey,
      chat: { platform: "api", chatId: sessionKey },
      chatType: "dm",
      userId,
    },
    state: { searchSessions: async () => [] },
    logger: silentLogger(),
    homeDir: rootDir,
    progress: () => {},
  };
}

async function call(name: string, args: Record<string, unknown>, session = "s1"): Promise<ToolOutput> {
  const tool = browser.tools.find((t) => t.name === name) as Tool | undefined;
  if (!tool) throw new Error(`no tool ${name}`);
  const parsed = tool.parameters.parse(args);
  const out = await tool
    .execute(parsed, ctxFor(session))
    .catch((err: Error) => ({ content: `error: ${err.message}`, isError: true }));
  return typeof out === "string" ? { content: out } : out;
}

/** The ref of the first element of `role` named `name` in a snapshot's text. */
function refOf(snapshot: string, role: string, name: string): string {
  const m = new RegExp(
    `\\[(e\\d+)\\] ${role} ${JSON.stringify(name).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`,
  ).exec(snapshot);
  if (!m?.[1]) throw new Error(`no ${role} "${name}" in:\n${snapshot}`);
  return m[1];
}

describe("browser tools (real Chromium)", () => {
  it("logs in through the form and reads the greeting behind it", async () => {
    const page = await call("browser_navigate", { url: `${site.url}/login` });
    expect(page.content).toContain("# Sign in");
    const user = refOf(page.content, "textbox", "Username");
    const password = refOf(page.content, "textbox", "Password");
    await call("browser_type", { ref: user, text: "alice" });
    const typed = await call("browser_type", { ref: password, text: "wonderland" });
    // The progress line names the element.
    const click = browser.tools.find((t) => t.name === "browser_click");
    expect(click?.label?.({ ref: refOf(typed.content, "button", "Sign in") })).toBe(
      '🖱️ click button "Sign in"',
    );
    expect(browser.tools.find((t) => t.name === "browser_navigate")?.label?.({ url: `${site.url}/x` })).toBe(
      `🌐 127.0.0.1:${site.port}`,
    );
    const after = await call("browser_click", { ref: refOf(typed.content, "button", "Sign in") });
    expect(after.content).toContain("Hello, alice!");
    expect(after.content).toContain(`URL: ${site.url}/welcome`);
  });

  it("reads a page rendered by JavaScript, and clicks its script's button", async () => {
    const page = await call("browser_navigate", { url: `${site.url}/js` });
    const waited = page.content.includes("42 items")
      ? page
      : await call("browser_wait", { text: "42 items" });
    expect(waited.content).toContain("42 items in stock");
    const clicked = await call("browser_click", { ref: refOf(waited.content, "button", "Order") });
    expect(clicked.content).toMatch(/button "Ordered"/);
  });

  it("clicks through a three-page link chain", async () => {
    let page = await call("browser_navigate", { url: `${site.url}/chain/1` });
    page = await call("browser_click", { ref: refOf(page.content, "link", "Next page") });
    expect(page.content).toContain("Step 2");
    page = await call("browser_click", { ref: refOf(page.content, "link", "Next page") });
    expect(page.content).toContain("the code is 7341");
    expect(page.content).toContain(`URL: ${site.url}/chain/3`);
    const back = await call("browser_back", {});
    expect(back.content).toContain(`URL: ${site.url}/chain/2`);
  });

  it("downloads a file into the workspace with the tab's cookies, and refuses one over the cap", async () => {
    const page = await call("browser_navigate", { url: `${site.url}/files` });
    const done = await call("browser_download", { ref: refOf(page.content, "link", "Monthly report") });
    expect(done.content).toMatch(/Downloaded .*report\.csv as .*downloads\/report\.csv/);
    const saved = /as (\S+) \(/.exec(done.content)?.[1] ?? "";
    // Logged in (the first test): the cookie went with the download.
    expect(readFileSync(saved, "utf8")).toBe("month,total\njanuary,100\n");
    const big = await call("browser_download", { ref: refOf(page.content, "link", "Big file") });
    expect(big.isError).toBe(true);
    expect(big.content, big.content).toMatch(
      /(larger than|over) browser\.download_max_bytes.*nothing was saved/,
    );
    expect(existsSync(join(saved, "..", "big.bin"))).toBe(false);
  });

  it("refuses a redirect to a refused address; the refused server sees nothing", async () => {
    const out = await call("browser_navigate", { url: `${site.url}/redirect-out` });
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/refused 127\.0\.0\.1:\d+: it is a loopback/);
    expect(refused.connections()).toBe(0);
  });

  it("loads a page whose subresources and WebSocket point at a refused address, and none reaches it", async () => {
    const pictures = await call("browser_navigate", { url: `${site.url}/subresource` });
    expect(pictures.content).toContain("A picture:");
    const live = await call("browser_navigate", { url: `${site.url}/websocket` });
    const status = await call("browser_wait", { text: "socket failed", ms: 5000 });
    expect(status.isError ?? false, live.content).toBe(false);
    expect(refused.connections()).toBe(0);
    expect(refused.requests).toEqual([]);
  });

  it("follows a link that opens a new tab: the new tab becomes the one the tools act on", async () => {
    const page = await call("browser_navigate", { url: `${site.url}/tabs` }, "tabs");
    const opened = await call(
      "browser_click",
      { ref: refOf(page.content, "link", "Open in a new tab") },
      "tabs",
    );
    expect(opened.content).toContain("the code is 7341");
  });

  it("refuses file:, chrome: and data: URLs", async () => {
    for (const url of ["file:///etc/passwd", "chrome://version", "data:text/html,<h1>hi</h1>"]) {
      const out = await call("browser_navigate", { url });
      expect(out.isError, url).toBe(true);
      expect(out.content).toMatch(/the browser opens http and https pages only/);
    }
  });

  it("keeps each session's cookies to itself", async () => {
    const other = await call("browser_navigate", { url: `${site.url}/welcome` }, "s2");
    // s1 logged in; s2 is sent to the login form.
    expect(other.content).toContain(`URL: ${site.url}/login`);
    const mine = await call("browser_navigate", { url: `${site.url}/welcome` }, "s1");
    expect(mine.content).toContain("Hello, alice!");
  });

  it("closes a session's context when the session ends: its login is gone", async () => {
    const runtime = await browser.started();
    expect(runtime?.pool.has("s1")).toBe(true);
    await browser.endSession("s1");
    expect(runtime?.pool.has("s1")).toBe(false);
    const again = await call("browser_navigate", { url: `${site.url}/welcome` }, "s1");
    expect(again.content).toContain(`URL: ${site.url}/login`);
  });

  it("keeps the browser's memory bounded over 50 navigations", async () => {
    const runtime = await browser.started();
    for (let n = 0; n < 5; n++) await call("browser_navigate", { url: `${site.url}/page?n=${n}` }, "mem");
    const early = (await runtime?.pool.memory())?.bytes ?? 0;
    for (let n = 5; n < 50; n++) await call("browser_navigate", { url: `${site.url}/page?n=${n}` }, "mem");
    const late = (await runtime?.pool.memory())?.bytes ?? 0;
    expect(early).toBeGreaterThan(0);
    // Forty-five more pages in one tab cost less than half again what five did.
    expect(late).toBeLessThan(early * 1.5);
  });
  it("closes idle contexts, then the browser itself; the next call starts it again", async () => {
    const runtime = await browser.started();
    expect(runtime?.pool.has("mem")).toBe(true);
    await runtime?.pool.sweep(Date.now() + 11 * 60_000);
    expect(runtime?.pool.has("mem")).toBe(false);
    expect(await runtime?.pool.memory()).toBeUndefined();
    const again = await call("browser_navigate", { url: `${site.url}/chain/3` }, "mem");
    expect(again.content).toContain("the code is 7341");
  });
});

describe("browser tools with private addresses allowed", () => {
  it("reaches the other server (so the refusals above are the proxy's doing)", async () => {
    const open = createBrowserTools(
      {
        browser: browserSectionSchema.parse({}),
        web: { allowPrivate: true },
        exec: { dangerousCommands: "manual" },
      },
      {
        access: new WorkspaceAccess({ workspaces: new WorkspaceManager({ rootDir, scope: "session" }) }),
        logger: silentLogger(),
        unavailable: [],
      },
    );
    try {
      const tool = open.tools.find((t) => t.name === "browser_navigate") as Tool;
      await tool.execute({ url: `${site.url}/subresource` }, ctxFor("open"));
      const before = refused.requests.length;
      expect(refused.connections()).toBeGreaterThan(0);
      expect(refused.requests.map((r) => r.path)).toEqual(expect.arrayContaining(["/pixel.png"]));
      expect(before).toBeGreaterThan(0);
    } finally {
      await open.close();
    }
  });
});

describe("browser tools on a remote browser (browser.cdp_url)", () => {
  it("drives a browser over CDP with the same proxy rules, and leaves it running", async () => {
    const remote = await launchChromium();
    const tools = createBrowserTools(
      {
        browser: browserSectionSchema.parse({
          cdpUrl: remote.wsEndpoint(),
          executable: "/nonexistent/chromium",
          allowPrivateHosts: [`127.0.0.1:${site.port}`],
        }),
        web: { allowPrivate: false },
        exec: { dangerousCommands: "manual" },
      },
      {
        access: new WorkspaceAccess({ workspaces: new WorkspaceManager({ rootDir, scope: "session" }) }),
        logger: silentLogger(),
        unavailable: [],
      },
    );
    try {
      const navigate = tools.tools.find((t) => t.name === "browser_navigate") as Tool;
      const before = refused.connections();
      const page = await navigate.execute({ url: `${site.url}/chain/3` }, ctxFor("remote"));
      expect(String(page)).toContain("the code is 7341");
      // Its requests went through Herald's proxy…
      const runtime = await tools.started();
      expect(runtime?.proxy.passed()).toContain(`127.0.0.1:${site.port}`);
      // …which refuses what it refuses for the local browser.
      const out = await navigate.execute({ url: `${site.url}/redirect-out` }, ctxFor("remote"));
      expect(typeof out === "string" ? out : out.content).toMatch(/refused 127\.0\.0\.1:\d+/);
      await navigate.execute({ url: `${site.url}/subresource` }, ctxFor("remote"));
      expect(refused.connections()).toBe(before);
      const ours = () => remote.targets().filter((t) => t.url().startsWith(site.url));
      expect(ours()).toHaveLength(1);
      await tools.close();
      // Our context (and its tab) is gone; the remote browser is not.
      await expect.poll(() => ours().length).toBe(0);
      expect(remote.connected).toBe(true);
    } finally {
      await tools.close();
      await remote.close();
    }
  });
});

describe("browser.persist_profile", () => {
  it("keeps a user's login across their sessions, and no other user's session gets it", async () => {
    const homeDir = mkdtempSync(join(tmpdir(), "herald-browser-home-"));
    const kept = createBrowserTools(
      {
        browser: browserSectionSchema.parse({
          allowPrivateHosts: [`127.0.0.1:${site.port}`],
          persistProfile: true,
        }),
        web: { allowPrivate: false },
        exec: { dangerousCommands: "manual" },
        homeDir,
      },
      {
        access: new WorkspaceAccess({ workspaces: new WorkspaceManager({ rootDir, scope: "session" }) }),
        logger: silentLogger(),
        unavailable: [],
      },
    );
    const run = async (name: string, args: Record<string, unknown>, session: string, user: string) => {
      const tool = kept.tools.find((t) => t.name === name) as Tool;
      const out = await tool.execute(tool.parameters.parse(args), ctxFor(session, user));
      return typeof out === "string" ? out : out.content;
    };
    try {
      const form = await run("browser_navigate", { url: `${site.url}/login` }, "p1", "carol");
      await run("browser_type", { ref: refOf(form, "textbox", "Username"), text: "bob" }, "p1", "carol");
      await run("browser_type", { ref: refOf(form, "textbox", "Password"), text: "builder" }, "p1", "carol");
      expect(await run("browser_click", { ref: refOf(form, "button", "Sign in") }, "p1", "carol")).toContain(
        "Hello, bob!",
      );
      await kept.endSession("p1");
      const files = readdirSync(join(homeDir, "browser", "profiles"));
      expect(files).toHaveLength(1);
      expect(statSync(join(homeDir, "browser", "profiles", files[0] ?? "")).mode & 0o777).toBe(0o600);
      // The same user's next session is still logged in; another user's is not.
      expect(await run("browser_navigate", { url: `${site.url}/welcome` }, "p2", "carol")).toContain(
        "Hello, bob!",
      );
      expect(await run("browser_navigate", { url: `${site.url}/welcome` }, "p3", "dave")).toContain(
        `URL: ${site.url}/login`,
      );
    } finally {
      await kept.close();
    }
  });
});

describe("browser caps", () => {
  const withCaps = (caps: Record<string, number>) =>
    createBrowserTools(
      {
        browser: browserSectionSchema.parse({ allowPrivateHosts: [`127.0.0.1:${site.port}`], ...caps }),
        web: { allowPrivate: false },
        exec: { dangerousCommands: "manual" },
      },
      {
        access: new WorkspaceAccess({ workspaces: new WorkspaceManager({ rootDir, scope: "session" }) }),
        logger: silentLogger(),
        unavailable: [],
      },
    );
  const open = (tools: BrowserTools, session: string) =>
    (tools.tools.find((t) => t.name === "browser_navigate") as Tool).execute(
      { url: `${site.url}/chain/1` },
      ctxFor(session),
    );

  it("closes the least recently used context past max_contexts, and others past max_memory_mb", async () => {
    const few = withCaps({ maxContexts: 2 });
    try {
      await open(few, "a");
      await open(few, "b");
      await open(few, "a");
      await open(few, "c");
      const pool = (await few.started())?.pool;
      expect(await pool?.openSessions()).toEqual(["a", "c"]);
    } finally {
      await few.close();
    }
    const small = withCaps({ maxMemoryMb: 1 });
    try {
      await open(small, "a");
      await open(small, "b");
      const pool = (await small.started())?.pool;
      expect(await pool?.openSessions()).toEqual(["b"]);
    } finally {
      await small.close();
    }
  });
});
