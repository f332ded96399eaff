/**
 * `npm start` runs the gateway with V8's defaults; `npm run start:lean` adds the two flags of the
 * low-memory profile that BENCHMARKS.md measures beside it (bench/lib.ts reads them from package.json).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const scripts = (
  JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }
).scripts;

describe("start scripts", () => {
  it("start runs the gateway; start:lean runs the same with the low-memory flags, both after a build", () => {
    expect(scripts["start"]).toBe("node dist/gateway/cli.js gateway");
    expect(scripts["start:lean"]).toBe(
      "node --max-semi-space-size=2 --heap-growing-percent=15 dist/gateway/cli.js gateway",
    );
    expect(scripts["prestart"]).toBe("npm run build --silent");
    expect(scripts["prestart:lean"]).toBe("npm run build --silent");
  });
});
