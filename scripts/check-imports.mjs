#!/usr/bin/env node
/**
 * The folder rules of ARCHITECTURE.md, checked on every product file (`npm run check`):
 * - each unit imports only the units its row below allows (the kernel, `core/`, imports nothing);
 * - from another family a folder is reached through its public surface: its `index.ts` (and its
 *   contracts, `types.ts`; its declarations, a platform folder's `module.ts`, a feature's
 *   `settings.ts` and a tool folder's `declaration.ts`; and an agent folder's or a tool folder's
 *   `gateway.ts`, its gateway side: what the gateway holds of it, without its implementation). Within a family, units may import each other's files directly. The kernel's files
 *   are each public: `core/` is a handful of contracts;
 * - the composition roots (`app/`) are imported by no product file;
 * - no import cycle between families, and none between files (a dynamic `import()` does not count
 *   between files: it loads its module later, on first use, as a tool's declaration its
 *   implementation, which may then name the declaration's types);
 * - in gateway/, agent/ and app/ no file over 400 lines and no function over 80 (body lines, measured
 *   by scripts/code-size.mjs), but for the exceptions below, each with its reason. An exception that
 *   no longer applies is reported too, so the lists only shrink.
 * Type-only imports and module augmentations count: a contract that points the wrong way is a
 * dependency all the same.
 * Tests and benchmarks may import anything. Exits 1 with one line per violation.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { functionLengths } from "./code-size.mjs";

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
  // Inbound webhooks start turns with delivery targets, as cron runs do.
  "adapters/webhooks": ["core", "adapters/shared", "sessions", "scheduler"],
  gateway: ["core", "sessions"],
  // The server's address joins the web tools' own listeners, which no agent fetch reaches.
  "gateway/http": ["core", "gateway", "agent/tools/web"],
  "gateway/mcp-server": ["core", "sessions", "scheduler"],
  "gateway/dashboard": ["core", "sessions", "scheduler", "skills/memory", "skills", "gateway"],
  "agent/exec": ["core"],
  "agent/exec/approvals": ["core"],
  "agent/documents": ["core"],
  "agent/persona": ["core", "agent/exec"],
  "agent/providers": ["core", "sessions", "scheduler"],
  // The agent core knows no feature: features add their StateClient members from their own folders.
  // The approvals library is the loop's own (a call held for approval ends the turn and resumes it).
  agent: ["core", "sessions", "agent/exec/approvals", "agent/documents", "agent/providers"],
  // Memory, skills and the review on the gateway: where the agent meets those features.
  "agent/learning": ["core", "sessions", "skills/memory", "skills", "agent"],
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
    "agent/tools/vision",
  ],
  app: ["*"],
};

/**
 * Imports of another family's inner files, `importer → imported`, each with its reason. The config is
 * loaded by every CLI command: it reaches a pure check in a file of its own rather than the folder's
 * index, which loads the whole feature.
 */
const DEEP_IMPORTS = {
  "app/config.ts → agent/tools/web/address.ts":
    "the loopback check of API_SERVER_HOST (agent/tools/web/index.ts loads the web tools: ~250 ms)",
  "app/config.ts → scheduler/targets.ts":
    "the check of each webhook route's delivery targets (scheduler/index.ts loads the cron service)",
  "app/gateway-adapters.ts → gateway/access.ts":
    "the access policy the platform adapters ask before the runner exists (gateway/index.ts loads the runner and the turn machinery, which load after the first poll)",
};

/** Files over 400 lines in gateway/, agent/ and app/, each with its reason. */
const LONG_FILES = {
  "agent/queue/bull-job-queue.ts":
    "BullMQ's queue, worker, per-key ordering locks, progress and announcements over one set of connections; its scripts, names and lent slots are split out already",
  "agent/tools/mcp/connection.ts":
    "one MCP server's life: transports, restarts with backoff, start on first use and stop when idle, capped reads and calls, all sharing the connection's private state (a split needs the state object of its own first)",
  "gateway/dashboard/server.ts":
    "the dashboard's request handling: login, CSRF and live streams shared by every page's GET and POST; the pages themselves are page-*.ts",
};

/** Functions over 80 lines in gateway/, agent/ and app/ (`file name`), each with its reason. */
const LONG_FUNCTIONS = {
  "app/doctor.ts runDoctor": "every check of `herald doctor` in the order it prints them",
  "app/setup/clack-prompter.ts createClackPrompter": "one adapter object over @clack/prompts' prompts",
  "gateway/dashboard/server.ts createDashboard":
    "the request handler is one closure over the logins, flash messages and live streams",
  "gateway/dashboard/server.ts get": "the GET routes of every page, one short case each",
  "gateway/dashboard/server.ts post": "the POST routes of every form, one short case each",
  "gateway/mcp-server/server.ts createHeraldMcpServer":
    "registers each MCP tool in turn: a schema and a short handler",
  "gateway/session-commands.ts sessionCommands":
    "one CommandModule literal: /new, /sessions, /resume, /title, /undo, /compress, each a short handler",
  "agent/loop.ts loop":
    "the agent loop's step cycle: the model call, hooks, tool calls and held approvals share its locals",
  "agent/model-client.ts createModelClient": "the client's closure over its SDK instances and retry timing",
  "agent/model-client.ts streamChat": "the fallback chain around `attempt`, with usage summed across tries",
  "agent/documents/extract.ts extractDocumentFromBuffer": "one branch per document kind, each short",
  "agent/tools/browser/tools-page.ts pageTools": "what the eight page tools do, short runs over shared deps",
  "agent/tools/files/patch-file.ts patchFile":
    "matching, the ambiguity errors and the diff of one replacement",
  "agent/tools/mcp/tools.ts mcpUtilityTools": "three tool definitions over one manager",
  "agent/tools/terminal/index.ts terminalTools":
    "the `terminal` and `process` tools' definitions over shared deps",
  "agent/tools/web/html-converter.ts createWorkerHtmlConverter":
    "the worker thread's life: start, restart after a crash, time limit per page",
};

const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 80;
const SIZED = ["gateway", "agent", "app"];

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

const familyOf = (file) => relative(root, file).split("/")[0];

/**
 * Whether another family may import `file`: a folder's index.ts or types.ts, a platform's module.ts, a
 * feature's settings.ts, a tool folder's declaration.ts, an agent or tool folder's gateway.ts. Module, settings and declaration
 * are declarations the config loader, setup, doctor, the reference page and the tool list read without
 * loading the platform's SDK or the feature itself; a gateway.ts is what the gateway builds at start
 * (commands, hooks on turns, what its pages read), so the rest loads only where turns run.
 */
function isPublic(file) {
  const rel = relative(root, file);
  const name = basename(rel);
  return (
    familyOf(file) === "core" ||
    name === "index.ts" ||
    name === "types.ts" ||
    name === "settings.ts" ||
    /^agent\/tools\/[^/]+\/declaration\.ts$/.test(rel) ||
    /^agent\/(tools\/)?[^/]+\/gateway\.ts$/.test(rel) ||
    /^adapters\/[^/]+\/module\.ts$/.test(rel)
  );
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

/**
 * An import, an export from, a dynamic import, or a module augmentation (`declare module "../types.js"`:
 * a feature adding its member to a contract depends on that contract like an import does).
 */
const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:[^"';]*?\s+from\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|(?:^|\n)\s*declare\s+module\s+["']([^"']+)["']/g;

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
/** The edges that load a module with its importer (all but dynamic imports): the file cycles' graph. */
const loadEdges = new Map();
const deepSeen = new Set();
for (const file of files) {
  const text = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
  const targets = new Set();
  const loads = new Set();
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (!spec?.startsWith(".")) continue;
    const target = resolve(dirname(file), spec).replace(/\.js$/, ".ts");
    targets.add(target);
    if (!m[2]) loads.add(target);
  }
  edges.set(file, targets);
  loadEdges.set(file, loads);
  const from = unitOf(file);
  const allowed = ruleOf(from);
  if (!allowed) {
    problems.push(`${relative(root, file)}: folder '${from}' has no row in scripts/check-imports.mjs`);
    continue;
  }
  for (const target of targets) {
    const to = unitOf(target);
    if (to === from) continue;
    const edge = `${relative(root, file)} imports ${relative(root, target)}`;
    if (to === "app") problems.push(`${edge}: nothing imports the composition roots (app/)`);
    else if (!allowed.includes("*") && !allowed.includes(to))
      problems.push(`${edge}: '${from}' may import only ${allowed.join(", ") || "nothing of the project"}`);
    else if (familyOf(target) !== familyOf(file) && !isPublic(target)) {
      const key = `${relative(root, file)} → ${relative(root, target)}`;
      if (DEEP_IMPORTS[key]) deepSeen.add(key);
      else problems.push(`${edge}: from another family, import ${to}/index.ts (its public surface)`);
    }
  }
}
for (const key of Object.keys(DEEP_IMPORTS))
  if (!deepSeen.has(key)) problems.push(`DEEP_IMPORTS lists '${key}', which no longer happens: remove it`);

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

for (const scc of cycles(loadEdges))
  problems.push(
    `file cycle: ${scc
      .map((f) => relative(root, f))
      .sort()
      .join(" ↔ ")}`,
  );

const folders = new Map();
for (const [file, targets] of edges) {
  const from = familyOf(file);
  if (!folders.has(from)) folders.set(from, new Set());
  for (const t of targets) if (familyOf(t) !== from) folders.get(from).add(familyOf(t));
}
for (const scc of cycles(folders)) problems.push(`folder cycle: ${scc.sort().join(" ↔ ")}`);

const longSeen = new Set();
for (const file of files) {
  const rel = relative(root, file);
  if (!SIZED.includes(familyOf(file))) continue;
  const text = readFileSync(file, "utf8");
  const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  if (lines > MAX_FILE_LINES) {
    if (LONG_FILES[rel]) longSeen.add(rel);
    else problems.push(`${rel}: ${lines} lines, over ${MAX_FILE_LINES}: split it`);
  }
  for (const fn of functionLengths(text)) {
    if (fn.lines <= MAX_FUNCTION_LINES) continue;
    const key = `${rel} ${fn.name}`;
    if (LONG_FUNCTIONS[key]) longSeen.add(key);
    else
      problems.push(
        `${rel}:${fn.start}: ${fn.name} is ${fn.lines} lines, over ${MAX_FUNCTION_LINES}: split it`,
      );
  }
}
for (const key of [...Object.keys(LONG_FILES), ...Object.keys(LONG_FUNCTIONS)])
  if (!longSeen.has(key)) problems.push(`'${key}' is listed as too long but is not: remove it from the list`);

if (problems.length) {
  console.error(`import rules (scripts/check-imports.mjs): ${problems.length} problem(s)`);
  for (const p of problems) console.error(`- ${p}`);
  process.exit(1);
}
console.log(`import rules: ${files.length} files, no violation, no cycle, no file or function too long`);
