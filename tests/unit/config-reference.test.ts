/**
 * docs/configuration.md's tables are written from the declarations (`npm run docs:config`): the page in
 * the repository is what the generator writes now, and it names every variable the loader reads, every
 * platform and every feature section.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { envTable } from "../../app/config.js";
import { renderConfigReference, withReference } from "../../app/config-reference.js";
import { features } from "../../app/features.js";
import { platformModules } from "../../app/platforms.js";

const pagePath = join(import.meta.dirname, "..", "..", "docs", "configuration.md");
const page = readFileSync(pagePath, "utf8");
const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

describe("the configuration reference", () => {
  it("is what `npm run docs:config` writes from the declarations", () => {
    // A failure here means a declaration changed: run `npm run docs:config` and commit the page.
    expect(page).toBe(withReference(page));
  });

  it("names every environment variable Herald reads", () => {
    const text = renderConfigReference();
    const common = /^[A-Z]+_(ALLOWED_USERS|HOME_CHANNEL|REQUIRE_MENTION|TOOLSETS)$/;
    const missing = envTable()
      .map((e) => e.env)
      .filter((name) => !text.includes(`\`${name}\``) && !common.test(name));
    expect(missing).toEqual([]);
    for (const name of ["ALLOWED_USERS", "HOME_CHANNEL", "REQUIRE_MENTION", "TOOLSETS"])
      expect(text).toContain(`\`<P>_${name}\``);
  });

  it("has a section for every platform and every feature", () => {
    const headings = new Set([...page.matchAll(/^## (.+)$/gm)].map((m) => m[1]));
    for (const m of platformModules) expect(headings).toContain(m.reference?.title ?? m.name);
    for (const f of features) expect(headings).toContain(f.reference.title ?? snake(f.key));
  });
});
