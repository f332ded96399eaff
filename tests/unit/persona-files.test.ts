/** Reading SOUL.md, personalities and AGENTS.md: what counts, what is cut, what is skipped. */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_FILE_CHARS, PersonaFiles } from "../../agent/persona/files.js";

let home: string | undefined;
afterEach(() => {
  if (home) rmSync(home, { recursive: true, force: true });
  home = undefined;
});

function setup(files: Record<string, string>): PersonaFiles & { errors: string[] } {
  home = mkdtempSync(join(tmpdir(), "herald-persona-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(home, path, ".."), { recursive: true });
    writeFileSync(join(home, path), text);
  }
  const errors: string[] = [];
  return Object.assign(new PersonaFiles({ homeDir: home, onError: (path) => errors.push(path) }), { errors });
}

describe("PersonaFiles", () => {
  it("has no identity without files; SOUL.md is the identity; a chosen personality replaces it", () => {
    expect(setup({}).identity(undefined)).toBeUndefined();
    const files = setup({ "SOUL.md": "  I am Quill.\n", "personalities/Pirate.md": "Arr." });
    expect(files.identity(undefined)).toBe("I am Quill.");
    expect(files.identity("default")).toBe("I am Quill.");
    expect(files.identity("pirate")).toBe("Arr.");
    // A chosen personality whose file went away falls back to SOUL.md.
    expect(files.identity("ninja")).toBe("I am Quill.");
  });

  it("lists personalities by lowercase name, skipping other files, bad names, empty ones and `default`", () => {
    const files = setup({
      "personalities/Teacher.md": "Patient.",
      "personalities/pirate.md": "Arr.",
      "personalities/notes.txt": "not a personality",
      "personalities/with space.md": "bad name",
      "personalities/default.md": "reserved",
      "personalities/empty.md": "   ",
    });
    expect(files.personalities()).toEqual(["empty", "pirate", "teacher"]);
    expect(files.personality("empty")).toBeUndefined();
    expect(files.personality("../SOUL")).toBeUndefined();
  });

  it("cuts long files and reports unreadable ones", () => {
    const files = setup({ "SOUL.md": "x".repeat(MAX_FILE_CHARS + 10), "ws/AGENTS.md": "Build with make." });
    expect(files.soul()).toHaveLength(MAX_FILE_CHARS + `\n[…cut at ${MAX_FILE_CHARS} characters]`.length);
    expect(files.projectContext(join(home!, "ws"))).toBe(
      "## Project context (AGENTS.md in your workspace)\nBuild with make.",
    );
    expect(files.projectContext(join(home!, "nowhere"))).toBeUndefined();
    if (process.getuid?.() !== 0) {
      chmodSync(join(home!, "ws", "AGENTS.md"), 0o000);
      expect(files.projectContext(join(home!, "ws"))).toBeUndefined();
      expect(files.errors).toEqual([join(home!, "ws", "AGENTS.md")]);
    }
  });
});
