/**
 * The cloud providers' SDKs load only when their backend is used: the built gateway's exec module and
 * a configured cloud backend import none of them; the first call (the live check) imports that
 * provider's SDK alone. Read from Node's module hook (`dist/bench/import-log.js`), on `dist/`.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, ROOT } from "../helpers/tmux.js";

const SDKS = ["@daytonaio/sdk", "e2b", "modal", "@vercel/sandbox"];

/** The node_modules packages a script loaded, before and after its marker line. */
function loadedBy(script: string): { before: string[]; after: string[] } {
  const dir = mkdtempSync(join(tmpdir(), "herald-lazy-"));
  const log = join(dir, "imports.log");
  try {
    execFileSync(
      process.execPath,
      ["--import", join(ROOT, "dist/bench/import-log.js"), "--input-type=module", "-e", script],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? "", HERALD_IMPORT_LOG: log },
        timeout: 60_000,
      },
    );
    const lines = readFileSync(log, "utf8").split("\n");
    const marker = lines.findIndex((l) => l.includes("#marker"));
    const pkgs = (ls: string[]) =>
      ls.map((l) => /node_modules\/((@[^/]+\/)?[^/]+)/.exec(l)?.[1]).filter((p): p is string => !!p);
    return { before: pkgs(lines.slice(0, marker)), after: pkgs(lines.slice(marker)) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  await ensureBuilt();
}, 600_000);

describe("cloud SDKs load lazily", () => {
  it("building the daytona backend imports no SDK; its first use imports Daytona's alone", () => {
    const { before, after } = loadedBy(`
      const { createExecutionBackend } = await import("./dist/agent/exec/index.js");
      const backend = createExecutionBackend({ backend: "daytona", daytona: { apiKey: "k", apiUrl: "http://127.0.0.1:9/api" } });
      await import("data:text/javascript,//#marker");
      await backend.checkAvailable();
    `);
    for (const sdk of SDKS) expect(before).not.toContain(sdk);
    expect(after).toContain("@daytonaio/sdk");
    for (const sdk of SDKS.filter((s) => s !== "@daytonaio/sdk")) expect(after).not.toContain(sdk);
  });
});
