/**
 * The V8 flags of the `herald` launcher line (gateway/cli.ts) are the ones `npm start` and
 * `npm run herald` pass, so every way of starting the gateway runs with the same memory settings.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");

describe("launcher flags", () => {
  it("are the same in the #! line and in the npm scripts", () => {
    const shebang = readFileSync(join(root, "gateway/cli.ts"), "utf8").split("\n", 1)[0]!;
    expect(shebang).toMatch(/^#!\/usr\/bin\/env -S node /);
    const flags = shebang.split(/\s+/).filter((a) => a.startsWith("--"));
    expect(flags).toEqual(["--max-semi-space-size=4", "--heap-growing-percent=20"]);
    const scripts = (
      JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
        scripts: Record<string, string>;
      }
    ).scripts;
    expect(scripts["start"]).toBe(`node ${flags.join(" ")} dist/gateway/cli.js gateway`);
    expect(scripts["herald"]).toBe(`node ${flags.join(" ")} dist/gateway/cli.js`);
  });
});
