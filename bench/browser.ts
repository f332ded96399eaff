/**
 * The browser toolset's costs, in this process with real Chromium: the first call (the browser and a
 * context start), `browser_navigate` (which answers with the snapshot) p50 and p90 on a local page,
 * the memory each open session adds (PSS of the browser's process tree), and a snapshot's size in
 * tokens against the page's HTML.
 */
import { mkdtempSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { WorkspaceAccess, WorkspaceManager } from "../agent/exec/index.js";
import { createBrowserTools } from "../agent/tools/browser/index.js";
import { browserSectionSchema } from "../agent/tools/browser/settings.js";
import type { Tool, ToolContext } from "../agent/types.js";
import { silentLogger } from "../core/logger.js";
import { articlePage, hubPage } from "../tests/fakes/web/pages.js";
import { machineLine, percentile, round } from "./lib.js";

export interface BrowserBenchOptions {
  /** Navigations timed (after 3 warm-up ones). */
  runs: number;
  /** Sessions open at once for the memory figure. */
  sessions: number;
}

export interface BrowserBenchResult {
  firstCallMs: number;
  navigateP50Ms: number;
  navigateP90Ms: number;
  /** PSS of the browser's processes with one session open, MB. */
  oneSessionMb: number;
  /** With `sessions` open. */
  manySessionsMb: number;
  perSessionMb: number;
  processes: number;
  pages: { name: string; htmlBytes: number; snapshotChars: number; snapshotTokens: number; ratio: number }[];
}

/**
 * A shop's search results as such pages are built: 60 product cards in nested classed markup with
 * tracking attributes, an inline state script, a filter form. About 40 KB of HTML.
 */
function shopPage(): string {
  const products = Array.from({ length: 60 }, (_, i) => ({
    id: 1000 + i,
    name: `Kite model ${i + 1}`,
    price: 19 + i,
  }));
  const cards = products
    .map(
      (p, i) =>
        `<div class="card col-sm-6 col-md-4 col-lg-3" data-product-id="${p.id}" data-track='{"list":"search","position":${i}}'><a class="card-link" href="/p/${p.id}"><img class="card-img lazy" src="/img/${p.id}.jpg" alt="${p.name}" width="240" height="240" loading="lazy"></a><div class="card-body"><h3 class="card-title"><a href="/p/${p.id}">${p.name}</a></h3><p class="price"><span class="currency">€</span><span class="amount">${p.price}.00</span></p><button class="btn btn-primary add-to-cart" data-sku="K${p.id}">Add to cart</button></div></div>`,
    )
    .join("\n");
  const state = JSON.stringify({
    products: products.map((p) => ({ ...p, stock: p.id % 7, tags: ["outdoor", "kites"] })),
  });
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Kites – Search results</title>
<style>${".card{margin:8px;padding:12px;border:1px solid #ddd}.btn{padding:4px 8px}".repeat(20)}</style></head><body>
<header><a href="/">KiteShop</a><form role="search" action="/search"><input name="q" aria-label="Search" value="kites"><button>Search</button></form></header>
<main><h1>60 results for "kites"</h1><form class="filters"><label>Sort <select name="sort"><option>Relevance</option><option>Price</option></select></label>
<label><input type="checkbox" name="stock"> In stock only</label></form><div class="row">${cards}</div></main>
<footer><a href="/help">Help</a> <a href="/terms">Terms</a></footer><script>window.__STATE__=${state};</script></body></html>`;
}

function ctxFor(sessionKey: string): ToolContext {
  return {
    signal: new AbortController().signal,
    origin: {
      sessionId: sessionKey,
      sessionKey,
      chat: { platform: "api", chatId: sessionKey },
      chatType: "dm",
      userId: "u",
    },
    state: { searchSessions: async () => [] },
    logger: silentLogger(),
    homeDir: tmpdir(),
    progress: () => {},
  };
}

const NAMES: Record<string, string> = {
  "/article": "news article (site chrome, ads, nav)",
  "/status": "status dashboard (table of links)",
  "/shop": "shop's results (60 product cards, state script)",
};

const text = (out: Awaited<ReturnType<Tool["execute"]>>) => (typeof out === "string" ? out : out.content);
const mb = (bytes: number | undefined) => round((bytes ?? 0) / 1024 / 1024, 1);

/** Runs the scenario. */
export async function benchBrowser(options: BrowserBenchOptions): Promise<BrowserBenchResult> {
  const pages: Record<string, string> = {
    "/article": articlePage(),
    "/status": hubPage(),
    "/shop": shopPage(),
  };
  const server = createServer((req, res) => {
    const body = pages[req.url ?? ""];
    res.writeHead(body ? 200 : 404, { "content-type": "text/html; charset=utf-8" }).end(body ?? "");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  const base = `http://127.0.0.1:${port}`;
  const rootDir = mkdtempSync(join(tmpdir(), "herald-bench-browser-"));
  const browser = createBrowserTools(
    {
      browser: browserSectionSchema.parse({
        allowPrivateHosts: [`127.0.0.1:${port}`],
        maxContexts: options.sessions + 1,
      }),
      web: { allowPrivate: false },
      exec: { dangerousCommands: "manual" },
    },
    {
      access: new WorkspaceAccess({ workspaces: new WorkspaceManager({ rootDir }) }),
      logger: silentLogger(),
      unavailable: [],
    },
  );
  const tool = (name: string) => browser.tools.find((t) => t.name === name) as Tool;
  const navigate = (url: string, session = "bench") =>
    tool("browser_navigate").execute({ url }, ctxFor(session));
  try {
    let started = performance.now();
    await navigate(`${base}/article`);
    const firstCallMs = performance.now() - started;
    for (let i = 0; i < 3; i++) await navigate(`${base}/status`);
    const times: number[] = [];
    for (let i = 0; i < options.runs; i++) {
      started = performance.now();
      await navigate(`${base}${i % 2 ? "/status" : "/article"}`);
      times.push(performance.now() - started);
    }
    const sizes: BrowserBenchResult["pages"] = [];
    for (const [path, html] of Object.entries(pages)) {
      await navigate(`${base}${path}`);
      const snapshot = text(await tool("browser_snapshot").execute({ full: true }, ctxFor("bench")));
      const tokens = Math.ceil(snapshot.length / 4);
      const htmlTokens = Math.ceil(Buffer.byteLength(html) / 4);
      sizes.push({
        name: NAMES[path] ?? path,
        htmlBytes: Buffer.byteLength(html),
        snapshotChars: snapshot.length,
        snapshotTokens: tokens,
        ratio: round(tokens / htmlTokens, 2),
      });
    }
    const runtime = await browser.started();
    const one = await runtime?.pool.memory();
    for (let s = 1; s < options.sessions; s++) await navigate(`${base}/article`, `bench-${s}`);
    const many = await runtime?.pool.memory();
    return {
      firstCallMs: round(firstCallMs, 0),
      navigateP50Ms: round(percentile(times, 50), 1),
      navigateP90Ms: round(percentile(times, 90), 1),
      oneSessionMb: mb(one?.bytes),
      manySessionsMb: mb(many?.bytes),
      perSessionMb: round((mb(many?.bytes) - mb(one?.bytes)) / Math.max(1, options.sessions - 1), 1),
      processes: many?.processes ?? 0,
      pages: sizes,
    };
  } finally {
    await browser.close();
    server.close();
  }
}

/** The BENCHMARKS.md section. */
export function browserMarkdown(
  r: BrowserBenchResult,
  options: BrowserBenchOptions,
  command: string,
): string {
  const load = loadavg()[0] ?? 0;
  const rows = r.pages
    .map(
      (p) =>
        `| snapshot of a ${p.name}: ${p.htmlBytes.toLocaleString("en")} bytes of HTML → ${p.snapshotChars.toLocaleString("en")} chars | ≈ ${p.snapshotTokens.toLocaleString("en")} tokens, **${p.ratio}×** the HTML's |`,
    )
    .join("\n");
  return `## Browser: navigate and snapshot, memory per session

\`${command}\` · ${machineLine()}

In one process (no gateway): the browser toolset as the gateway builds it, Debian's Chromium
launched as \`nobody\` with its own sandbox, every request through Herald's proxy, pages served on
127.0.0.1 (allowed by \`browser.allow_private_hosts\`). \`browser_navigate\` answers with the page's
snapshot, so its time is navigate + snapshot; the sizes are of \`browser_snapshot\` with \`full\`. Memory is the PSS summed over the browser's process tree
(\`/proc/<pid>/smaps_rollup\`). Tokens are estimated as characters / 4.
Load average (1 min) when it finished: ${round(load, 1)} on ${cpus().length} cores; figures from a busy
host are upper bounds.

| what | figure |
|---|---|
| first call: browser start, context, navigate + snapshot | ${r.firstCallMs} ms |
| browser_navigate + snapshot of a local page, p50 / p90 (${options.runs} runs) | **${r.navigateP50Ms} / ${r.navigateP90Ms} ms** |
| browser with one session open (one tab) | ${r.oneSessionMb} MB |
| with ${options.sessions} sessions open (${r.processes} processes) | ${r.manySessionsMb} MB |
| **memory per further open session** | **${r.perSessionMb} MB** |
${rows}
`;
}
