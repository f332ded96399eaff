/**
 * docs/adding-a-platform.md and docs/adding-a-tool.md, checked against the tree: their steps are numbered
 * and each names a file; every file a page names exists, the example's own files as the real example's
 * (`zulip` → Mattermost, `units` → the web tools); every "`symbol` in `file`" is declared in that file;
 * and each page names every member of the contract it teaches and every file the real example's
 * declaration is made of.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const read = (path: string) => readFileSync(join(root, path), "utf8");

interface Page {
  path: string;
  /** The example's name in the page, and the real one whose files stand for it. */
  example: string;
  real: string;
  /** The contract the page teaches: its file and interface. */
  contract: { file: string; name: string };
  /** The real example's declaration file: each `./x.js` it imports must be named by the page. */
  declaration: string;
  /** Files the page must name (the lists the new module goes into). */
  lists: string[];
}

const PAGES: Page[] = [
  {
    path: "docs/adding-a-platform.md",
    example: "zulip",
    real: "mattermost",
    contract: { file: "core/platform.ts", name: "PlatformModule" },
    declaration: "adapters/mattermost/module.ts",
    lists: ["app/platforms.ts"],
  },
  {
    path: "docs/adding-a-tool.md",
    example: "units",
    real: "web",
    contract: { file: "core/settings.ts", name: "FeatureModule" },
    declaration: "agent/tools/web/settings.ts",
    lists: ["app/tools.ts", "app/features.ts"],
  },
];

/** The page's prose and tables, without its code blocks. */
const prose = (text: string) => text.replace(/```[\s\S]*?```/g, "");

/** Backticked repository paths: `a/b.ts`, `tests/fakes/llm/`; not bare names, URL paths or placeholders. */
function pathsIn(text: string): string[] {
  const found = [...prose(text).matchAll(/`([\w.-]+(?:\/[\w.-]+)*(?:\/|\.(?:ts|md|mjs|sh|json)))`/g)];
  return [...new Set(found.map((m) => m[1]!).filter((p) => p.includes("/")))];
}

/** The members of interface `name` in `file` (one per line, as the house writes them). */
function membersOf(file: string, name: string): string[] {
  const source = read(file);
  const start = source.indexOf(`export interface ${name}`);
  const body = source.slice(start, source.indexOf("\n}\n", start));
  return [...body.matchAll(/^ {2}(?:readonly )?(\w+)\??[(:<]/gm)].map((m) => m[1]!);
}

for (const page of PAGES) {
  describe(page.path, () => {
    const text = read(page.path);
    const steps = [...text.matchAll(/^## (\d+)\. (.+)$/gm)];
    const realPath = (p: string) => p.replaceAll(page.example, page.real);

    it("has numbered steps, each naming a file", () => {
      expect(steps.map((s) => Number(s[1]))).toEqual(steps.map((_, i) => i + 1));
      expect(steps.length).toBeGreaterThan(3);
      const bodies = text.split(/^## \d+\. /m).slice(1);
      for (const [i, body] of bodies.entries())
        expect(pathsIn(body), `step ${i + 1} names no file`).not.toEqual([]);
    });

    it("names only files that exist (the example's as the real example's)", () => {
      const missing = pathsIn(text)
        .map(realPath)
        .filter((p) => !existsSync(join(root, p)));
      expect(missing).toEqual([]);
    });

    it("says where each symbol it names is, truly", () => {
      const claims = [
        ...prose(text).matchAll(
          /((?:`\w+`(?:,\s+|\s+and\s+|,\s+and\s+))*`\w+`)\s+in\s+`([\w./-]+\.(?:ts|mjs))`/g,
        ),
      ];
      expect(claims.length).toBeGreaterThan(3);
      const wrong = claims.flatMap(([, symbols, file]) => {
        const source = read(realPath(file!));
        return [...symbols!.matchAll(/`(\w+)`/g)]
          .map((m) => m[1]!)
          .filter((symbol) => !new RegExp(`\\b${symbol}\\b`).test(source))
          .map((symbol) => `${symbol} in ${file}`);
      });
      expect(wrong).toEqual([]);
    });

    it("names every member of the contract and every file of the real declaration", () => {
      const members = membersOf(page.contract.file, page.contract.name);
      expect(members.length).toBeGreaterThan(3);
      expect(members.filter((m) => !new RegExp(`\\b${m}\\b`).test(text))).toEqual([]);
      const folder = page.declaration.slice(0, page.declaration.lastIndexOf("/") + 1);
      const own = [...read(page.declaration).matchAll(/from "\.\/([\w-]+)\.js"/g)].map((m) =>
        `${folder}${m[1]}.ts`.replaceAll(page.real, page.example),
      );
      const named = pathsIn(text);
      const wanted = [page.declaration.replaceAll(page.real, page.example), ...own, ...page.lists];
      expect(wanted.filter((p) => !named.includes(p))).toEqual([]);
    });
  });
}
