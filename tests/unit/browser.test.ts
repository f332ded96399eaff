/**
 * The browser toolset's parts without a browser: the proxy's address checks over real sockets (plain
 * HTTP and CONNECT), the private-host allow list, the snapshot's text and stable refs, the doctor line
 * and the toolset being off without Chromium, and puppeteer-core staying unloaded until a call.
 */
import { spawnSync } from "node:child_process";
import { request } from "node:http";
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WorkspaceAccess, WorkspaceManager } from "../../agent/exec/index.js";
import type { UnavailableToolset } from "../../agent/tool-registry.js";
import {
  type BrowserProxy,
  createBrowserTools,
  privateAllow,
  startBrowserProxy,
} from "../../agent/tools/browser/index.js";
import { browserSectionSchema, browserSettings } from "../../agent/tools/browser/settings.js";
import { formatTree } from "../../agent/tools/browser/snapshot.js";
import { OwnListeners } from "../../agent/tools/web/index.js";
import { silentLogger } from "../../core/logger.js";
import { type EchoServer, startEchoServer } from "../fakes/web/echo.js";

let proxy: BrowserProxy | undefined;
let echo: EchoServer | undefined;
afterEach(async () => {
  await proxy?.close();
  await echo?.close();
  proxy = undefined;
  echo = undefined;
});

/** GET `url` through the proxy as a browser would (absolute URI): status, header, body. */
function viaProxy(
  proxyUrl: string,
  url: string,
): Promise<{ status: number; refused: boolean; body: string }> {
  const p = new URL(proxyUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: p.hostname, port: p.port, path: url, headers: { host: new URL(url).host } },
      (res) => {
        let body = "";
        res.on("data", (d: Buffer) => (body += d.toString()));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, refused: res.headers["x-herald-refused"] === "1", body }),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** The first line of the proxy's answer to CONNECT `target`. */
function connectVia(proxyUrl: string, target: string): Promise<string> {
  const p = new URL(proxyUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(p.port), p.hostname, () =>
      socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`),
    );
    socket.once("data", (d: Buffer) => {
      resolve(d.toString().split("\r\n")[0] ?? "");
      socket.destroy();
    });
    socket.on("error", reject);
  });
}

/** Sends `head` raw to `proxyUrl`, reads the first line of the answer, then resets the connection. */
function answerThenReset(proxyUrl: string, head: string): Promise<string> {
  const p = new URL(proxyUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(p.port), p.hostname, () => socket.write(head));
    socket.once("data", (d: Buffer) => {
      socket.resetAndDestroy();
      resolve(d.toString().split("\r\n")[0] ?? "");
    });
    socket.on("error", reject);
  });
}

describe("the browser's proxy", () => {
  it("refuses loopback by default, over plain HTTP and CONNECT, and never connects", async () => {
    echo = await startEchoServer();
    proxy = await startBrowserProxy({ logger: silentLogger(), listeners: new OwnListeners() });
    const plain = await viaProxy(proxy.pagesUrl, `${echo.url}/x`);
    expect(plain.status).toBe(403);
    expect(plain.refused).toBe(true);
    expect(plain.body).toMatch(/loopback/);
    expect(await connectVia(proxy.pagesUrl, `127.0.0.1:${echo.port}`)).toMatch(/^HTTP\/1\.1 403/);
    // A name that resolves to loopback, and an IPv4-mapped IPv6 spelling.
    expect((await viaProxy(proxy.pagesUrl, `http://localhost:${echo.port}/y`)).status).toBe(403);
    expect(await connectVia(proxy.pagesUrl, `[::ffff:127.0.0.1]:${echo.port}`)).toMatch(/^HTTP\/1\.1 403/);
    expect(echo.connections()).toBe(0);
    expect(proxy.refusals().at(-1)?.reason).toMatch(/loopback/);
  });

  it("lets an allowed host:port through, to the address it checked", async () => {
    echo = await startEchoServer();
    proxy = await startBrowserProxy({
      logger: silentLogger(),
      listeners: new OwnListeners(),
      allowPrivate: privateAllow([`127.0.0.1:${echo.port}`], false),
    });
    const ok = await viaProxy(proxy.pagesUrl, `${echo.url}/hello?a=1`);
    expect(ok.status).toBe(200);
    expect(echo.requests[0]?.path).toBe("/hello?a=1");
    expect(await connectVia(proxy.pagesUrl, `127.0.0.1:${echo.port}`)).toBe(
      "HTTP/1.1 200 Connection Established",
    );
    // Another port of the same host stays refused.
    expect((await viaProxy(proxy.pagesUrl, `http://127.0.0.1:${echo.port + 1}/`)).status).toBe(403);
  });

  it("never reaches Herald's own listeners nor itself, whatever is allowed", async () => {
    echo = await startEchoServer();
    const listeners = new OwnListeners();
    listeners.add({ address: "127.0.0.1", port: echo.port, label: "Herald's own HTTP server" });
    proxy = await startBrowserProxy({ logger: silentLogger(), listeners, allowPrivate: () => true });
    const own = await viaProxy(proxy.pagesUrl, `${echo.url}/dashboard`);
    expect(own.status).toBe(403);
    expect(own.body).toMatch(/Herald's own HTTP server/);
    const self = await viaProxy(proxy.pagesUrl, `${proxy.pagesUrl}/`);
    expect(self.body).toMatch(/browser proxy/);
    expect(echo.connections()).toBe(0);
  });

  it("refuses everything on the browser-wide listener", async () => {
    proxy = await startBrowserProxy({
      logger: silentLogger(),
      listeners: new OwnListeners(),
      allowPrivate: () => true,
    });
    expect((await viaProxy(proxy.closedUrl, "http://example.com/")).status).toBe(403);
    expect(await connectVia(proxy.closedUrl, "example.com:443")).toMatch(/^HTTP\/1\.1 403/);
  });

  it("survives a browser that resets the connection after a refused CONNECT or Upgrade", async () => {
    proxy = await startBrowserProxy({ logger: silentLogger(), listeners: new OwnListeners() });
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on("uncaughtException", onUncaught);
    try {
      const connectHead = "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n";
      const upgradeHead =
        "GET http://example.com/ws HTTP/1.1\r\nHost: example.com\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n";
      expect(await answerThenReset(proxy.closedUrl, connectHead)).toBe("HTTP/1.1 403 Forbidden");
      expect(await answerThenReset(proxy.closedUrl, upgradeHead)).toBe("HTTP/1.1 403 Forbidden");
      expect(await answerThenReset(proxy.pagesUrl, upgradeHead)).toBe("HTTP/1.1 501 Not Implemented");
      // The resets reach the proxy's sockets after the answers.
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      process.off("uncaughtException", onUncaught);
    }
    expect(uncaught).toEqual([]);
    // And it still answers.
    expect(await connectVia(proxy.closedUrl, "example.com:443")).toMatch(/^HTTP\/1\.1 403/);
  });
});

describe("privateAllow", () => {
  it("matches a host on any port, host:port on that port, by name or address", () => {
    const allow = privateAllow(["intranet.local", "127.0.0.1:8080", "[::1]:3000"], false);
    expect(allow({ hostname: "intranet.local", address: "10.0.0.5", port: 443 })).toBe(true);
    expect(allow({ hostname: "127.0.0.1", address: "127.0.0.1", port: 8080 })).toBe(true);
    expect(allow({ hostname: "127.0.0.1", address: "127.0.0.1", port: 8081 })).toBe(false);
    expect(allow({ hostname: "::1", address: "::1", port: 3000 })).toBe(true);
    expect(allow({ hostname: "evil.example", address: "10.0.0.5", port: 443 })).toBe(false);
    expect(privateAllow([], true)({ hostname: "x", address: "10.0.0.1", port: 1 })).toBe(true);
  });
});

describe("snapshots", () => {
  const node = (role: string, name: string, extra: Record<string, unknown> = {}) =>
    ({ role, name, ...extra }) as never;
  it("gives interactive elements refs, merges text, and keeps an element's ref in the next snapshot", () => {
    const tree = {
      role: "RootWebArea",
      name: "Sign in",
      children: [
        node("heading", "Members", { level: 1 }),
        node("StaticText", "Please"),
        node("StaticText", "sign in."),
        node("textbox", "Username", { backendNodeId: 5, loaderId: "L" }),
        node("button", "Sign in", {
          backendNodeId: 7,
          loaderId: "L",
          children: [node("StaticText", "Sign in")],
        }),
      ],
    } as never;
    const first = formatTree(tree);
    expect(first.lines[0]).toBe('heading "Members" level=1');
    expect(first.lines[1]).toBe("text: Please sign in.");
    expect(first.lines[2]).toMatch(/^\[e\d+\] textbox "Username"$/);
    expect(first.lines[3]).toMatch(/^\[e\d+\] button "Sign in"$/);
    const second = formatTree(tree, first.ids);
    expect(second.lines).toEqual(first.lines);
    expect([...second.refs.keys()]).toEqual([...first.refs.keys()]);
  });
});

describe("the toolset's availability", () => {
  it("is off without Chromium, and doctor says how to install it", async () => {
    const section = browserSectionSchema.parse({ executable: "/nonexistent/chromium" });
    const unavailable: UnavailableToolset[] = [];
    const tools = createBrowserTools(
      { browser: section, web: { allowPrivate: false }, exec: { dangerousCommands: "manual" } },
      {
        access: new WorkspaceAccess({ workspaces: new WorkspaceManager({ rootDir: "/nonexistent" }) }),
        logger: silentLogger(),
        unavailable,
      },
    );
    expect(tools.tools).toEqual([]);
    expect(unavailable[0]?.toolset).toBe("browser");
    expect(unavailable[0]?.fix).toMatch(/apt-get install -y chromium/);
    const lines = await browserSettings.doctor?.(section, { homeDir: "/tmp" });
    expect(lines?.[0]?.text).toMatch(/browser: off/);
    expect(lines?.[0]?.fix).toMatch(/apt-get install -y chromium/);
  });

  it("builds its tools without loading puppeteer-core", () => {
    const script = `
      import { register } from "node:module";
      register("data:text/javascript," + encodeURIComponent(
        "export async function resolve(s, c, next) { if (s.includes('puppeteer')) process.stderr.write('resolved:' + s + '\\\\n'); return next(s, c); }"));
      const { createBrowserTools } = await import("./agent/tools/browser/index.ts");
      const { browserSectionSchema } = await import("./agent/tools/browser/settings.ts");
      const built = createBrowserTools(
        { browser: browserSectionSchema.parse({ executable: process.execPath }), web: { allowPrivate: false }, exec: { dangerousCommands: "manual" } },
        { access: undefined, logger: { child() { return this; }, info() {}, warn() {}, debug() {}, error() {} }, unavailable: [] });
      console.log(built.tools.length);`;
    const out = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      encoding: "utf8",
      cwd: process.cwd(),
    });
    expect(out.stdout.trim()).toBe("14");
    expect(out.stderr).not.toContain("resolved:");
  });
});
