/**
 * Plugins through a whole gateway (API server harness, scripted model): the sample plugin's tool,
 * command and hook; capabilities refused by the manifest and by the chat type's config; broken plugins
 * reported with file and line while the gateway runs on; /reload-plugins picks up a new plugin.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { FakeLlmRequest } from "../fakes/llm/index.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const sample = join(import.meta.dirname, "../../examples/plugins/notes");

/** A HERALD_HOME config that installs plugins before the gateway starts. */
function withPlugins(files: Record<string, string>): string {
  // The harness makes HERALD_HOME; plugins go to a folder of our own, named by config.
  const dir = join(mkdtemp(), "plugins");
  mkdirSync(dir, { recursive: true });
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  cpSync(sample, join(dir, "notes"), { recursive: true });
  return dir;
}

const temps: string[] = [];
function mkdtemp(): string {
  const dir = mkdtempSync(join(tmpdir(), "herald-plugins-"));
  temps.push(dir);
  return dir;
}

const toolResults = (request: FakeLlmRequest) =>
  request.messages.filter((m) => m.role === "tool").map((m) => String(m.content ?? ""));

describe("plugins", () => {
  it("runs the sample plugin's tool, command and hook through a chat", async () => {
    const dir = withPlugins({});
    harness = await startHarness({ env: { HERALD_PLUGINS_DIR: dir } });
    harness.llm.script(
      { toolCalls: [{ name: "note_add", arguments: { text: "deploy is on Friday" } }] },
      { text: "Noted." },
    );
    const reply = await chat(harness, "note that the deploy is on Friday");
    expect(reply.text).toBe("Noted.");
    expect(harness.llm.requests[0]!.tools?.map((t) => t.function.name)).toContain("note_add");
    expect(toolResults(harness.llm.requests[1]!)).toEqual(["Noted: deploy is on Friday"]);
    expect(readFileSync(join(harness.homeDir, "plugin-data/notes/notes.md"), "utf8")).toBe(
      "- deploy is on Friday\n",
    );

    const notes = await chat(harness, "/notes", { sessionId: reply.sessionId! });
    expect(notes.text).toBe("Notes:\n- deploy is on Friday");

    // The hook blocks a note that looks like a password; the model reads why.
    harness.llm.script(
      { toolCalls: [{ name: "note_add", arguments: { text: "the root password is hunter2" } }] },
      { text: "I won't note that." },
    );
    await chat(harness, "note the root password is hunter2", { sessionId: reply.sessionId! });
    expect(toolResults(harness.llm.requests.at(-1)!).at(-1)).toMatch(
      /^error: blocked by the notes plugin: notes must not hold passwords/,
    );
    expect(readFileSync(join(harness.homeDir, "plugin-data/notes/notes.md"), "utf8")).not.toContain(
      "hunter2",
    );

    const status = await chat(harness, "/status", { sessionId: reply.sessionId! });
    expect(status.text).toContain("Plugins: notes (loaded)");
  });
});
