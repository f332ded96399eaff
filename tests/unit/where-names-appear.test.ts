/**
 * A platform is its folder plus its entry in app/platforms.ts; a tool is its folder plus its entry in
 * app/tools.ts. This test lists every place in the product code (comments aside) that names a platform
 * the way a program acts on it: an import from `adapters/<p>/`, one of its env names (`<P>_…`), its name
 * as a string (`"telegram"`) or a config path of it (`"telegram.bot_token"`); and every place that names
 * a built-in tool as a string. A place outside the folder, the list, and the allowlist below (each entry
 * with its reason) fails the test: declare the fact in the module instead, or add it here with a reason.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { platformModules } from "../../app/platforms.js";

const root = join(import.meta.dirname, "..", "..");
const FAMILIES = ["core", "app", "gateway", "adapters", "agent", "sessions", "scheduler", "skills"];

/** Places outside its folder that may name a platform, and why. */
const PLATFORM_ALLOWED: Record<string, { file: string; why: string }[]> = {
  whatsapp: [
    {
      file: "app/cli/whatsapp.ts",
      why: "`herald whatsapp link|unlink`, the CLI command that links the device",
    },
    { file: "agent/tools/voice/reply.ts", why: "the platforms whose voice notes are Ogg/Opus (PTT)" },
  ],
  telegram: [{ file: "agent/tools/voice/reply.ts", why: "the platforms whose voice notes are Ogg/Opus" }],
  email: [{ file: "scheduler/targets.ts", why: "an `email:` delivery target must be an address" }],
  line: [{ file: "adapters/cli/line.ts", why: "not the platform: readline's `line` event" }],
  signal: [{ file: "agent/worker.ts", why: "not the platform: the `signal` (AbortSignal) key of TurnDeps" }],
  homeassistant: [
    {
      file: "agent/tools/ha/settings.ts",
      why: "the `ha` toolset's settings: HOMEASSISTANT_URL and HOMEASSISTANT_TOKEN name the Home Assistant both the toolset and the platform's notifications reach",
    },
    {
      file: "agent/tools/ha/approval.ts",
      why: "not the platform: Home Assistant's generic `homeassistant` service domain (homeassistant.turn_off reaches any entity)",
    },
  ],
  webchat: [
    {
      file: "gateway/agent-routes.ts",
      why: "the API server and the web chat always talk to the default agent: their clients read a chat's sessions and history by its keys",
    },
    {
      file: "app/web-chat.ts",
      why: "the web chat's services on the gateway's state (its owners, pairing, turn ids), the member of AdapterServices it declares",
    },
  ],
};

/** Places outside its folder that may name a tool, and why. */
const TOOL_ALLOWED: Record<string, { file: string; why: string }[]> = {
  clarify: [{ file: "agent/delegate/service.ts", why: "delegated children get no clarify (nobody answers)" }],
  skill_manage: [{ file: "agent/review.ts", why: "the learning review writes skills with it" }],
  send_message: [
    { file: "gateway/mcp-server/server.ts", why: "Herald's own MCP server has a tool of the same name" },
  ],
};

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (path.endsWith(".ts")) out.push(path);
  }
  return out;
}

/** A source file without its comments: the code (string literals blanked) and the string literals. */
function lex(source: string): { code: string; strings: string[] } {
  let code = "";
  const strings: string[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    const next = source[i + 1];
    if (c === "/" && next === "/") {
      while (i < source.length && source[i] !== "\n") i++;
    } else if (c === "/" && next === "*") {
      const end = source.indexOf("*/", i + 2);
      i = end < 0 ? source.length : end + 2;
    } else if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      let text = "";
      while (j < source.length && source[j] !== c) {
        text += source[j] === "\\" ? source[j++]! + (source[j] ?? "") : source[j];
        j++;
      }
      strings.push(text);
      code += '""';
      i = j + 1;
    } else {
      code += c;
      i++;
    }
  }
  return { code, strings };
}

const files = FAMILIES.flatMap((family) => walk(join(root, family))).map((path) => ({
  file: relative(root, path),
  ...lex(readFileSync(path, "utf8")),
}));

/** Files (outside `own`) whose code names `name` by `matches`. */
function placesNaming(own: (file: string) => boolean, matches: (f: (typeof files)[number]) => boolean) {
  return files.filter((f) => !own(f.file) && matches(f)).map((f) => f.file);
}

describe("a platform is its folder plus its entry in app/platforms.ts", () => {
  for (const { name } of platformModules) {
    it(`${name} is named nowhere else`, () => {
      const env = new RegExp(`\\b${name.toUpperCase()}_[A-Z0-9_]+`);
      const path = new RegExp(`^${name}\\.[a-z_]+`);
      const places = placesNaming(
        (file) => file.startsWith(`adapters/${name}/`),
        ({ code, strings }) =>
          env.test(code) ||
          strings.some((s) => s === name || path.test(s) || env.test(s) || s.includes(`adapters/${name}/`)),
      );
      const allowed = (PLATFORM_ALLOWED[name] ?? []).map((a) => a.file);
      expect(places.filter((file) => !allowed.includes(file))).toEqual(["app/platforms.ts"]);
      // An allowlist entry that is no longer needed goes too.
      expect(allowed.filter((file) => !places.includes(file))).toEqual([]);
    });
  }

  it("app/platforms.ts names each platform in one import and one line of the list", () => {
    const list = readFileSync(join(root, "app", "platforms.ts"), "utf8");
    for (const { name } of platformModules) {
      const lines = list.split("\n").filter((line) => line.includes(`${name}Platform`));
      expect(lines).toEqual([
        `import { ${name}Platform } from "../adapters/${name}/module.js";`,
        `  ${name}Platform,`,
      ]);
    }
  });
});

describe("a tool is its folder plus its entry in app/tools.ts", () => {
  // Each built-in tool's name, from its `defineTool({ name: "…" })` or `declareTool({ name: "…" })`, with
  // the folder it is declared in.
  const tools = files.flatMap(({ file }) => {
    const source = readFileSync(join(root, file), "utf8");
    return [...source.matchAll(/(?:defineTool|declareTool(?:<[^>]*>)?)\(\{\s*name:\s*"([a-z_]+)"/g)].map(
      (m) => ({
        name: m[1]!,
        folder: file.slice(0, file.lastIndexOf("/") + 1),
      }),
    );
  });
  // Names that are plain words (memory, todo, terminal, patch, process) are also toolsets, state methods
  // or actions; only compound and coined names are checked.
  const checked = tools.filter((t) => t.name.includes("_") || ["clarify", "cronjob"].includes(t.name));

  it("finds the built-in tools", () => {
    expect(checked.map((t) => t.name)).toEqual(
      expect.arrayContaining(["session_search", "cronjob", "web_search", "read_file", "delegate_task"]),
    );
  });

  it("names each one only in its folder", () => {
    const strays = checked.flatMap(({ name, folder }) =>
      placesNaming(
        (file) => file.startsWith(folder),
        ({ strings }) => strings.includes(name),
      )
        .filter((file) => !(TOOL_ALLOWED[name] ?? []).some((a) => a.file === file))
        .map((file) => `${name} in ${file}`),
    );
    expect(strays).toEqual([]);
  });
});
