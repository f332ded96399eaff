/**
 * The bundle `npm start` runs (`dist/bundle/cli.js`, scripts/bundle.mjs), spawned as npm start spawns
 * it: it answers on Telegram's fake with the fake model, its prompt lists the bundled skills (read from
 * `skills/bundled/`), and its web chat serves the page's files (copied beside the compiled adapter):
 * the folders a bundled module finds through `core/module-dir.ts`. The files the bundle starts as
 * threads and child processes are where it looks for them. A bad setting is named with zod's English
 * message (the bundle keeps zod's English locale only).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { start, stop } from "../../bench/floor.js";
import { startEntry } from "../../bench/lib.js";
import { moduleDir } from "../../core/module-dir.js";
import { type FakeLlm, startFakeLlm } from "../fakes/llm/index.js";
import { type FakeTelegram, startFakeTelegram } from "../fakes/telegram/index.js";
import { freePort } from "../helpers/net.js";
import { BUNDLE, ensureBuilt, ROOT } from "../helpers/tmux.js";

let telegram: FakeTelegram;
let llm: FakeLlm;
let home: string;
let gateway: Awaited<ReturnType<typeof start>> | undefined;

beforeAll(async () => {
  await ensureBuilt();
  telegram = await startFakeTelegram();
  llm = await startFakeLlm();
  home = mkdtempSync(join(tmpdir(), "herald-bundle-"));
}, 600_000);

afterAll(async () => {
  if (gateway) await stop(gateway);
  await telegram?.close();
  await llm?.close();
  rmSync(home, { recursive: true, force: true });
});

describe("the bundle npm start runs", () => {
  it("is the script npm start names", () => {
    expect(startEntry(ROOT)).toBe(BUNDLE);
  });

  it("answers on Telegram, lists the bundled skills and serves the web chat's files", async () => {
    const port = await freePort();
    gateway = await start(
      { root: ROOT },
      "herald",
      { telegram, llm },
      {
        env: {
          API_SERVER_ENABLED: "true",
          API_SERVER_PORT: String(port),
          WEBCHAT_ENABLED: "true",
          DASHBOARD_PASSWORD: "correct horse battery",
        },
      },
    );
    llm.setDefault(() => ({ text: "hello from the bundle" }));
    telegram.userSends({ chatId: 4201, text: "hi", fromId: 4201 });
    await telegram.waitFor(() => telegram.botMessages(4201).length > 0, 20_000);
    expect(telegram.botMessages(4201).map((m) => m.text)).toEqual(["hello from the bundle"]);

    const system = String(llm.requests.at(-1)?.messages[0]?.content ?? "");
    expect(system).toContain("daily-briefing");

    const base = `http://127.0.0.1:${port}`;
    const page = await (await fetch(`${base}/chat`)).text();
    const css = /href="([^"]+chat\.css)"/.exec(page)?.[1];
    expect(css).toBeDefined();
    const res = await fetch(new URL(css!, base));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/css");
    expect((await res.text()).length).toBeGreaterThan(100);
  }, 60_000);

  it("names a bad setting with zod's English message", () => {
    writeFileSync(join(home, "config.yaml"), 'model:\n  max_iterations: "lots"\n');
    let out = "";
    try {
      execFileSync(process.execPath, [BUNDLE, "doctor"], {
        env: { PATH: process.env["PATH"] ?? "", HERALD_HOME: home },
        encoding: "utf8",
      });
    } catch (err) {
      out = String((err as { stdout?: string }).stdout ?? "");
    }
    expect(out).toContain(
      "HERALD_MAX_ITERATIONS (config.yaml: model.max_iterations) is invalid: Invalid input: expected number, received string",
    );
  });

  it("finds the HTML converter's worker and the document converter's child beside their compiled modules", () => {
    const bundled = `file://${join(ROOT, "dist", "bundle", "chunk.js")}`;
    expect(existsSync(join(moduleDir(bundled, "agent/tools/web"), "html-worker.js"))).toBe(true);
    expect(existsSync(join(moduleDir(bundled, "agent/documents"), "converter-child.js"))).toBe(true);
    // Outside the bundle a module's folder is its own.
    const own = `file://${join(ROOT, "dist", "agent", "documents", "convert-process.js")}`;
    expect(moduleDir(own, "agent/documents")).toBe(join(ROOT, "dist", "agent", "documents"));
  });
});
