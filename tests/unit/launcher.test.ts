/**
 * `npm start` runs the gateway's bundle with the two heap flags BENCHMARKS.md measures (bench/lib.ts reads
 * them from package.json), and the Docker image runs it with the same.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  scripts: Record<string, string>;
  bin: Record<string, string>;
};
const scripts = pkg.scripts;

const HEAP_FLAGS = "--max-semi-space-size=2 --heap-growing-percent=50";

describe("start scripts", () => {
  it("start runs the gateway after a build, with the heap flags the benchmark measures", () => {
    expect(scripts["start"]).toBe(`node ${HEAP_FLAGS} dist/bundle/cli.js gateway`);
    expect(scripts["prestart"]).toBe("npm run build --silent");
  });

  it("the herald command is the same bundle", () => {
    expect(pkg.bin["herald"]).toBe("dist/bundle/cli.js");
    expect(scripts["herald"]).toBe("node dist/bundle/cli.js");
  });

  it("the Docker image runs every herald command with the same flags", () => {
    const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
    const entrypoint = /^ENTRYPOINT (.+)$/m.exec(dockerfile)?.[1];
    expect(JSON.parse(entrypoint ?? "null")).toEqual([
      "node",
      ...HEAP_FLAGS.split(" "),
      "/app/dist/bundle/cli.js",
    ]);
  });
});
