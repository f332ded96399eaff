#!/usr/bin/env node
/**
 * The folder rules of ARCHITECTURE.md, checked on every product file (`npm run check`):
 * - each folder imports only the folders its row below allows (the kernel, `core/`, imports nothing);
 * - the composition roots (`app/`) are imported by no product file;
 * - no import cycle between folders, and none between files.
 * Type-only imports count: a contract that points the wrong way is a dependency all the same.
 * Tests and benchmarks may import anything. Exits 1 with one line per violation.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = resolve(dirname(new URL(import.meta.url).pathname), "..");

/** Folder → the folders it may import (besides itself). `adapters/*` is each platform folder. */
const ALLOWED = {
  core: [],
  memory: ["core"],
  exec: ["core"],
  approvals: ["core"],
  documents: ["core"],
  web: ["core", "documents"],
  voice: ["core"],
  persona: ["core"],
  mcp: ["core"],
  sessions: ["core"],
  skills: ["core", "memory"],
  "adapters/shared": ["core"],
  "adapters/*": ["core", "adapters/shared"],
  scheduler: ["core", "sessions"],
  providers: ["core", "sessions"],
  agent: ["core", "sessions", "memory", "skills", "scheduler", "approvals", "documents", "providers"],
  tools: [
    "core",
    "agent",
    "sessions",
    "memory",
    "skills",
    "scheduler",
    "exec",
    "approvals",
    "documents",
    "web",
    "voice",
    "mcp",
  ],
  gateway: ["core", "sessions"],
  hooks: ["core"],
  plugins: ["core", "agent", "hooks"],
  "mcp-server": ["core", "sessions", "scheduler"],
  dashboard: ["core", "sessions", "scheduler", "memory", "skills"],
  setup: [],
  webhooks: ["core"],
  taskboard: ["core"],
  delegation: ["core", "agent"],
  app: ["*"],
};

/** The folder a file belongs to, as the table names it. */
function unitOf(file) {
  const parts = relative(root, file).split("/");
  if (parts[0] === "adapters" && parts.length > 2)
    return parts[1] === "shared" ? "adapters/shared" : `adapters/${parts[1]}`;
  return parts[0];
}

function ruleOf(unit) {
  return unit.startsWith("adapters/") && unit !== "adapters/shared" ? ALLOWED["adapters/*"] : ALLOWED[unit];
}

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (path.endsWith(".ts") && !path.endsWith(".d.ts") && !path.endsWith(".test.ts")) out.push(path);
  }
  return out;
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:[^"';]*?\s+from\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

const files = Object.keys(ALLOWED)
  .map((unit) => unit.replace("/*", ""))
  .filter((top, i, all) => all.indexOf(top) === i && !top.includes("/"))
  .flatMap((top) => {
    try {
      return walk(join(root, top));
    } catch {
      return [];
    }
  });

const problems = [];
const edges = new Map();
for (const file of files) {
  const text = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
  const targets = new Set();
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2];
    if (!spec?.startsWith(".")) continue;
    targets.add(resolve(dirname(file), spec).replace(/\.js$/, ".ts"));
  }
  edges.set(file, targets);
  const from = unitOf(file);
  const allowed = ruleOf(from);
  if (!allowed) {
    problems.push(`${relative(root, file)}: folder '${from}' has no row in scripts/check-imports.mjs`);
    continue;
  }
  for (const target of targets) {
    const to = unitOf(target);
    if (to === from) continue;
    if (to === "app")
      problems.push(
        `${relative(root, file)} imports ${relative(root, target)}: nothing imports the composition roots (app/)`,
      );
    else if (!allowed.includes("*") && !allowed.includes(to))
      problems.push(
        `${relative(root, file)} imports ${relative(root, target)}: '${from}' may import only ${allowed.join(", ") || "nothing of the project"}`,
      );
  }
}

/** Strongly connected components with more than one member (or a self-loop): the cycles. */
function cycles(graph) {
  let index = 0;
  const stack = [];
  const on = new Set();
  const idx = new Map();
  const low = new Map();
  const found = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || graph.get(v)?.has(v)) found.push(scc);
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found;
}

for (const scc of cycles(edges))
  problems.push(
    `file cycle: ${scc
      .map((f) => relative(root, f))
      .sort()
      .join(" ↔ ")}`,
  );

const folders = new Map();
for (const [file, targets] of edges) {
  const from = unitOf(file).split("/")[0];
  if (!folders.has(from)) folders.set(from, new Set());
  for (const t of targets)
    if (unitOf(t).split("/")[0] !== from) folders.get(from).add(unitOf(t).split("/")[0]);
}
for (const scc of cycles(folders)) problems.push(`folder cycle: ${scc.sort().join(" ↔ ")}`);

if (problems.length) {
  console.error(`import rules (scripts/check-imports.mjs): ${problems.length} problem(s)`);
  for (const p of problems) console.error(`- ${p}`);
  process.exit(1);
}
console.log(`import rules: ${files.length} files, no violation, no cycle`);
