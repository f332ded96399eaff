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

/**
 * Unit → the units it may import (besides itself). A unit is a folder of a family: `agent/exec`,
 * `agent/tools/web`, `gateway/dashboard`; files directly in a family's folder (and folders not listed
 * as units) belong to the family's own unit (`agent`, `gateway`). `adapters/*` is each platform folder,
 * `agent/tools/*` each tool folder.
 */
const ALLOWED = {
  core: [],
  "skills/memory": ["core"],
  skills: ["core", "skills/memory"],
  sessions: ["core"],
  scheduler: ["core", "sessions"],
  "adapters/shared": ["core"],
  "adapters/*": ["core", "adapters/shared"],
  "adapters/webhooks": ["core", "adapters/shared", "sessions", "scheduler"],
  gateway: ["core", "sessions"],
  "gateway/http": ["core", "gateway", "agent/tools/web"],
  "gateway/mcp-server": ["core", "sessions", "scheduler"],
  "gateway/dashboard": ["core", "sessions", "scheduler", "skills/memory", "skills", "gateway"],
  "agent/exec": ["core"],
  "agent/exec/approvals": ["core"],
  "agent/documents": ["core"],
  "agent/persona": ["core", "agent/exec"],
  "agent/providers": ["core", "sessions", "scheduler"],
  agent: [
    "core",
    "sessions",
    "skills/memory",
    "skills",
    "scheduler",
    "agent/exec/approvals",
    "agent/documents",
    "agent/providers",
  ],
  "agent/plugins/hooks": ["core"],
  "agent/plugins": [
    "core",
    "agent",
    "agent/plugins/hooks",
    "agent/exec",
    "agent/exec/approvals",
    "agent/tools/web",
  ],
  "agent/delegate": ["core", "sessions", "agent"],
  "agent/tools/*": [
    "core",
    "agent",
    "sessions",
    "skills/memory",
    "skills",
    "scheduler",
    "agent/exec",
    "agent/exec/approvals",
    "agent/documents",
    "agent/tools/web",
    "agent/tools/voice",
    "agent/tools/mcp",
  ],
  app: ["*"],
};

/** Folders that are units of their own (see ALLOWED); `adapters/<x>` and `agent/tools/<x>` always are. */
const UNITS = Object.keys(ALLOWED)
  .filter((u) => u.includes("/") && !u.endsWith("/*"))
  .sort((a, b) => b.length - a.length);

/** The unit a file belongs to, as the table names it. */
function unitOf(file) {
  const rel = relative(root, file);
  const named = UNITS.find((u) => rel.startsWith(`${u}/`));
  if (named) return named;
  const parts = rel.split("/");
  if (parts[0] === "adapters" && parts.length > 2) return parts.slice(0, 2).join("/");
  if (parts[0] === "agent" && parts[1] === "tools" && parts.length > 3) return parts.slice(0, 3).join("/");
  return parts[0];
}

function ruleOf(unit) {
  if (ALLOWED[unit]) return ALLOWED[unit];
  if (unit.startsWith("adapters/")) return ALLOWED["adapters/*"];
  if (unit.startsWith("agent/tools/")) return ALLOWED["agent/tools/*"];
  return undefined;
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

const FAMILIES = ["core", "app", "gateway", "adapters", "agent", "sessions", "scheduler", "skills"];
const files = FAMILIES.flatMap((top) => {
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
