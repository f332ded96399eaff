/**
 * A tool's implementation loads on its first call, not at start: the built gateway (`herald gateway`
 * on Telegram's fake, many toolsets on) is spawned with Node's module hook (`dist/bench/import-log.js`)
 * and answers a plain message having loaded none of the implementation modules its tools' declarations
 * name (each `agent/tools/<name>/declaration.js` imports them with `import()`); a turn whose model calls
 * `todo` then loads `todo`'s implementation, and only that one.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { start, stop } from "../../bench/floor.js";
import { type FakeLlm, startFakeLlm } from "../fakes/llm/index.js";
import { type FakeTelegram, startFakeTelegram } from "../fakes/telegram/index.js";
import { ensureBuilt, ROOT } from "../helpers/tmux.js";

const TOOLS_DIR = join(ROOT, "dist/agent/tools");

/** Every module a tool declaration loads on first call, as `agent/tools/<folder>/<file>.js`. */
function implementationModules(): string[] {
  const found = new Set<string>();
  for (const folder of readdirSync(TOOLS_DIR)) {
    let text: string;
    try {
      text = readFileSync(join(TOOLS_DIR, folder, "declaration.js"), "utf8");
    } catch {
      continue;
    }
    for (const m of text.matchAll(/import\("\.\/([^"]+)"\)/g)) found.add(`agent/tools/${folder}/${m[1]}`);
  }
  return [...found].sort();
}

let telegram: FakeTelegram;
let llm: FakeLlm;
let dir: string;
let gateway: Awaited<ReturnType<typeof start>> | undefined;

beforeAll(async () => {
  await ensureBuilt();
  telegram = await startFakeTelegram();
  llm = await startFakeLlm();
  dir = mkdtempSync(join(tmpdir(), "herald-lazy-tools-"));
}, 600_000);

afterAll(async () => {
  if (gateway) await stop(gateway);
  await telegram?.close();
  await llm?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The Herald modules loaded so far, as paths under `dist/`. */
function loaded(log: string): Set<string> {
  return new Set(
    readFileSync(log, "utf8")
      .split("\n")
      .map((line) => /\/dist\/(.+)$/.exec(line)?.[1])
      .filter((path): path is string => path !== undefined),
  );
}

async function reply(chatId: number, text: string): Promise<string> {
  const before = telegram.botMessages(chatId).length;
  telegram.userSends({ chatId, text, fromId: chatId });
  await telegram.waitFor(() => telegram.botMessages(chatId).length > before, 120_000);
  return telegram.botMessages(chatId).at(-1)?.text ?? "";
}

describe("tool implementations load on first call", () => {
  it("a plain turn loads no tool's implementation; a todo call loads todo's alone", async () => {
    const modules = implementationModules();
    // The declarations of every converted folder name their implementation.
    for (const expected of ["todo/impl.js", "files/impl.js", "web/tools.js", "browser/tools-page.js"])
      expect(modules).toContain(`agent/tools/${expected}`);

    const log = join(dir, "modules.log");
    gateway = await start(
      { root: ROOT },
      "herald",
      { telegram, llm },
      {
        nodeFlags: ["--import", join(ROOT, "dist/bench/import-log.js")],
        // dist/ module by module (the bundle npm start runs has chunks, not the modules named here).
        entry: join(ROOT, "dist/app/cli.js"),
        env: {
          HERALD_IMPORT_LOG: log,
          HERALD_TOOLSETS: "core,cron,memory,skills,terminal,files,web,vision,messaging,tasks",
        },
      },
    );

    // The fake model echoes: a plain turn with no tool call.
    expect(await reply(4101, "hello there")).toBe("echo: hello there");
    const plain = loaded(log);
    expect(plain.has("agent/tools/todo/declaration.js")).toBe(true);
    expect(modules.filter((m) => plain.has(m))).toEqual([]);

    llm.script(
      { toolCalls: [{ name: "todo", arguments: { action: "add", items: ["pack"] } }] },
      { text: "planned" },
    );
    telegram.userSends({ chatId: 4102, text: "plan my trip", fromId: 4102 });
    // A progress line ("📋 todo add") comes first; the reply after the call.
    await telegram.waitFor(() => telegram.botMessages(4102).some((m) => m.text === "planned"), 120_000);
    const after = loaded(log);
    expect(modules.filter((m) => after.has(m))).toEqual(["agent/tools/todo/impl.js"]);
  }, 300_000);
});
