import { execFileSync } from "node:child_process";
import {
  chmod,
  mkdir,
  mkdtemp,
  readdir,
  readFile as readText,
  rm,
  stat,
  symlink,
  writeFile as writeRaw,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileAtomic } from "../../agent/exec/index.js";
import { readUpTo } from "../../agent/tools/files/common.js";
import {
  createFileScope,
  type FileScope,
  patchFile,
  readFile,
  searchFiles,
  writeFile,
} from "../../agent/tools/files/index.js";
import { makeDocx, makePdf, TINY_PNG } from "../helpers/document-fixtures.js";

let base: string;
let root: string;
let outside: string;
let scope: FileScope;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "herald-files-"));
  root = join(base, "ws");
  outside = join(base, "outside");
  await mkdir(root);
  await mkdir(outside);
  await writeRaw(join(outside, "secret.txt"), "secret\n");
  scope = createFileScope(root);
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

async function put(rel: string, content: string | Uint8Array): Promise<string> {
  const abs = join(root, rel);
  await mkdir(join(abs, ".."), { recursive: true });
  await writeRaw(abs, content);
  return abs;
}

describe("createFileScope", () => {
  it("takes paths relative to the workspace, or absolute inside it, as workspace-relative paths", () => {
    expect(scope.resolve("a/b.txt")).toBe("a/b.txt");
    expect(scope.resolve(join(scope.root, "x.txt"))).toBe("x.txt");
    expect(scope.resolve(".")).toBe(".");
    expect(scope.resolve("a/../b/")).toBe("b");
  });

  it.each(["../x", "../outside/secret.txt", "a/../../x", "/etc/passwd"])(
    "refuses %s as outside the workspace",
    (path) => {
      expect(() => scope.resolve(path)).toThrow(/is outside the workspace/);
    },
  );

  it("refuses symlinks pointing outside, including dangling ones, where the files are, and follows those inside", async () => {
    await symlink(outside, join(root, "escape"));
    await symlink(join(outside, "not-yet.txt"), join(root, "dangling.txt"));
    await put("real/inside.txt", "in\n");
    await symlink(join(root, "real"), join(root, "alias"));
    await expect(readFile(scope, { path: "escape/secret.txt" })).rejects.toThrow(/outside the workspace/);
    await expect(writeFile(scope, { path: "escape/new.txt", content: "x" })).rejects.toThrow(
      /outside the workspace/,
    );
    await expect(writeFile(scope, { path: "dangling.txt", content: "x" })).rejects.toThrow(
      /outside the workspace/,
    );
    expect(await readFile(scope, { path: "alias/inside.txt" })).toContain("1\tin");
    expect(await readdir(outside)).toEqual(["secret.txt"]);
    await rm(join(root, "escape"));
    await rm(join(root, "dangling.txt"));
  });
});

describe("readFile", () => {
  it("numbers lines cat -n style and says it showed the whole file", async () => {
    await put("small.txt", "alpha\nbeta\r\ngamma\n");
    const out = await readFile(scope, { path: "small.txt" });
    expect(out).toBe("     1\talpha\n     2\tbeta\n     3\tgamma\n(3 lines, whole file)");
  });

  it("pages a large file and says how to read the next page", async () => {
    await put("big.txt", Array.from({ length: 5000 }, (_, i) => `line ${i + 1}`).join("\n"));
    const first = await readFile(scope, { path: "big.txt" });
    expect(first.split("\n")).toHaveLength(2001);
    expect(first).toMatch(/^ {5}1\tline 1\n/);
    expect(first).toMatch(/ {2}2000\tline 2000\n\(lines 1–2,000 of 5,000; next page: offset=2001\)$/);
    const last = await readFile(scope, { path: "big.txt", offset: 4001 });
    expect(last).toMatch(/^ {2}4001\tline 4001\n/);
    expect(last).toMatch(/\(lines 4,001–5,000 of 5,000; end of file\)$/);
    const slice = await readFile(scope, { path: "big.txt", offset: 10, limit: 2 });
    expect(slice).toBe("    10\tline 10\n    11\tline 11\n(lines 10–11 of 5,000; next page: offset=12)");
    await expect(readFile(scope, { path: "big.txt", offset: 6000 })).rejects.toThrow(
      /past the end.*5,000 lines/,
    );
  });

  it("cuts long lines with a marker and stops a page at the output limit", async () => {
    await put("wide.txt", `${"x".repeat(5000)}\nshort\n`);
    const out = await readFile(scope, { path: "wide.txt" });
    expect(out).toContain(`${"x".repeat(2000)} … [line cut: 3,000 more characters]`);
    await put("many-wide.txt", Array.from({ length: 100 }, () => "y".repeat(1500)).join("\n"));
    const capped = await readFile(scope, { path: "many-wide.txt" }, { maxOutputChars: 10_000 });
    expect(capped.length).toBeLessThan(10_500);
    expect(capped).toMatch(/stopped at 10,000 characters of output; next page: offset=7\)$/);
  });

  it("decodes UTF-16 text with a byte-order mark", async () => {
    await put(
      "utf16.txt",
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("héllo\r\nwörld\r\n", "utf16le")]),
    );
    expect(await readFile(scope, { path: "utf16.txt" })).toBe(
      "     1\théllo\n     2\twörld\n(2 lines, whole file)",
    );
    await expect(
      patchFile(scope, { path: "utf16.txt", old_string: "héllo", new_string: "x" }),
    ).rejects.toThrow(/UTF-16/);
  });

  it("refuses binaries with their size and a type guess", async () => {
    await put("image.txt", TINY_PNG);
    await expect(readFile(scope, { path: "image.txt" })).rejects.toThrow(
      /image\.txt is a binary file \(PNG image, \d+ bytes\); read_file shows text only/,
    );
  });

  it("shows PDFs and DOCX files as extracted text, paged the same way", async () => {
    await put("doc/report.pdf", makePdf([["First page text"], ["Second page text"]]));
    const pdf = await readFile(scope, { path: "doc/report.pdf" });
    expect(pdf).toMatch(/^doc\/report\.pdf \(PDF, 2 pages; extracted text\)\n/);
    expect(pdf).toContain("\tFirst page text");
    expect(pdf).toMatch(/\tSecond page text\n\(lines 1–\d+ of \d+; end of file\)|\(\d+ lines, whole file\)$/);
    const paged = await readFile(scope, { path: "doc/report.pdf", limit: 1 });
    expect(paged).toMatch(/next page: offset=2\)$/);
    await put("doc/letter.docx", await makeDocx(["Hello from Word"]));
    expect(await readFile(scope, { path: "doc/letter.docx" })).toContain("     1\tHello from Word");
    await put("doc/broken.pdf", "%PDF-1.4\nnot really\n");
    await expect(readFile(scope, { path: "doc/broken.pdf" })).rejects.toThrow(
      /^doc\/broken\.pdf looks like a PDF file but could not be read/,
    );
    await put("doc/scan.pdf", makePdf([[]]));
    expect(await readFile(scope, { path: "doc/scan.pdf" })).toContain("this PDF has no text layer (a scan?)");
  });

  it("stops when the signal fires", async () => {
    const controller = new AbortController();
    controller.abort(new Error("turn cancelled"));
    await expect(readFile(scope, { path: "big.txt" }, { signal: controller.signal })).rejects.toThrow(
      "turn cancelled",
    );
    await expect(
      searchFiles(scope, { pattern: "x", content: true }, { signal: controller.signal, engine: "grep" }),
    ).rejects.toThrow("turn cancelled");
  });

  it("explains directories, missing files and empty files", async () => {
    await mkdir(join(root, "dir"), { recursive: true });
    await expect(readFile(scope, { path: "dir" })).rejects.toThrow(/is a directory; use search_files/);
    await expect(readFile(scope, { path: "missing.txt" })).rejects.toMatchObject({ code: "not_found" });
    await put("empty.txt", "");
    expect(await readFile(scope, { path: "empty.txt" })).toBe("empty.txt is empty (0 bytes)");
    await expect(readFile(scope, { path: "small.txt", offset: 0 })).rejects.toMatchObject({
      code: "tool_invalid_args",
    });
  });
});

describe("writeFile", () => {
  it("creates parent directories, then replaces, leaving no temporary files", async () => {
    const created = await writeFile(scope, { path: "out/deep/new.txt", content: "héllo\n" });
    expect(created).toBe("Created out/deep/new.txt (7 bytes written)");
    await chmod(join(root, "out/deep/new.txt"), 0o640);
    const replaced = await writeFile(scope, { path: "out/deep/new.txt", content: "bye\n" });
    expect(replaced).toBe("Replaced out/deep/new.txt (4 bytes written; it had 7)");
    expect(await readText(join(root, "out/deep/new.txt"), "utf8")).toBe("bye\n");
    expect((await stat(join(root, "out/deep/new.txt"))).mode & 0o777).toBe(0o640);
    expect(await readdir(join(root, "out/deep"))).toEqual(["new.txt"]);
  });

  it("refuses directories and paths outside the workspace", async () => {
    await expect(writeFile(scope, { path: "out", content: "x" })).rejects.toThrow(/is a directory/);
    await expect(writeFile(scope, { path: "../outside/x.txt", content: "x" })).rejects.toThrow(
      /outside the workspace/,
    );
  });

  it("removes its temporary file when the rename fails and leaves the target as it was", async () => {
    await put("blocked/inner/keep.txt", "keep\n");
    await expect(writeFileAtomic(join(root, "blocked/inner"), "data")).rejects.toThrow();
    expect((await readdir(join(root, "blocked"))).sort()).toEqual(["inner"]);
    expect(await readText(join(root, "blocked/inner/keep.txt"), "utf8")).toBe("keep\n");
  });
});

describe("readUpTo", () => {
  it("reads one byte past the cap at most, however large the file", async () => {
    await put("large.bin", "x".repeat(3 * 1024 * 1024 + 4096));
    const capped = await readUpTo(scope, "large.bin", 3 * 1024 * 1024);
    expect(capped.length).toBe(3 * 1024 * 1024 + 1);
    await put("small.txt", "tiny");
    expect((await readUpTo(scope, "small.txt", 1024)).toString()).toBe("tiny");
  });
});

describe("patchFile", () => {
  const source = "function add(a, b) {\n  return a + b;\n}\n\nfunction sub(a, b) {\n  return a - b;\n}\n";

  it("replaces a unique match atomically and shows a diff", async () => {
    await put("math.js", source);
    const out = await patchFile(scope, {
      path: "math.js",
      old_string: "return a - b;",
      new_string: "return a - b - 0;",
    });
    expect(out).toBe(
      [
        "Patched math.js: 1 replacement at line 6",
        "@@ -4,4 +4,4 @@",
        " ",
        " function sub(a, b) {",
        "-  return a - b;",
        "+  return a - b - 0;",
        " }",
      ].join("\n"),
    );
    expect(await readText(join(root, "math.js"), "utf8")).toContain("return a - b - 0;");
    expect((await readdir(root)).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });

  it("says when nothing matches, and where a whitespace-insensitive match is", async () => {
    await put("math.js", source);
    await expect(
      patchFile(scope, { path: "math.js", old_string: "return a * b;", new_string: "x" }),
    ).rejects.toThrow(/old_string was not found in math\.js; read the file again/);
    await expect(
      patchFile(scope, { path: "math.js", old_string: "return a+b;", new_string: "x" }),
    ).rejects.toThrow(/ignoring whitespace it would match at line 2/);
  });

  it("refuses an ambiguous match with the count and lines, and replaces all on request", async () => {
    await put("math.js", source);
    await expect(
      patchFile(scope, { path: "math.js", old_string: "(a, b)", new_string: "(x, y)" }),
    ).rejects.toThrow(/occurs 2 times in math\.js \(lines 1, 5\).*replace_all/);
    const out = await patchFile(scope, {
      path: "math.js",
      old_string: "(a, b)",
      new_string: "(x, y)",
      replace_all: true,
    });
    expect(out).toBe(
      [
        "Patched math.js: 2 replacements",
        "@@ -1,7 +1,7 @@",
        "-function add(a, b) {",
        "+function add(x, y) {",
        "   return a + b;",
        " }",
        " ",
        "-function sub(a, b) {",
        "+function sub(x, y) {",
        "   return a - b;",
        " }",
      ].join("\n"),
    );
    expect((await readText(join(root, "math.js"), "utf8")).match(/\(x, y\)/g)).toHaveLength(2);
  });

  it("gives distant changes their own hunks and counts the hunks it does not show", async () => {
    await put(
      "spread.txt",
      Array.from({ length: 80 }, (_, i) => (i % 10 === 0 ? `mark ${i}` : `line ${i}`)).join("\n"),
    );
    const out = await patchFile(scope, {
      path: "spread.txt",
      old_string: "mark",
      new_string: "MARK",
      replace_all: true,
    });
    expect(out).toMatch(
      /^Patched spread\.txt: 8 replacements\n@@ -1,3 \+1,3 @@\n-mark 0\n\+MARK 0\n line 1\n line 2\n@@ -9,5 \+9,5 @@/,
    );
    expect(out.match(/^@@/gm)).toHaveLength(5);
    expect(out).toMatch(/… 3 more hunks not shown$/);
  });

  it("refuses edits past its bounds, saying which and what to do instead", async () => {
    await put("over.txt", Buffer.alloc(10 * 1024 * 1024 + 1, "a"));
    await expect(patchFile(scope, { path: "over.txt", old_string: "a", new_string: "b" })).rejects.toThrow(
      /over\.txt is 10\.0 MB, too large to patch \(limit 10\.0 MB\); edit it with a command in the terminal/,
    );
    await put("many.txt", "x\n".repeat(10_001));
    await expect(
      patchFile(scope, { path: "many.txt", old_string: "x", new_string: "y", replace_all: true }),
    ).rejects.toThrow(/occurs more than 10,000 times in many\.txt; patch replaces at most 10,000 at once/);
    await put("grow.txt", `${"NEEDLE\n".repeat(10)}${"z".repeat(9 * 1024 * 1024)}`);
    await expect(
      patchFile(scope, {
        path: "grow.txt",
        old_string: "NEEDLE",
        new_string: "n".repeat(200_000),
        replace_all: true,
      }),
    ).rejects.toThrow(/the patched grow\.txt would be 11,437,194 characters, too large to patch/);
    expect((await readText(join(root, "grow.txt"), "utf8")).startsWith("NEEDLE\n")).toBe(true);
  });

  it("matches LF text in a CRLF file and keeps CRLF", async () => {
    await put("win.txt", "one\r\ntwo\r\nthree\r\n");
    await patchFile(scope, { path: "win.txt", old_string: "one\ntwo", new_string: "uno\ndos" });
    expect(await readText(join(root, "win.txt"), "utf8")).toBe("uno\r\ndos\r\nthree\r\n");
  });

  it("refuses no-op edits, empty old_string, missing files and binaries", async () => {
    await put("math.js", source);
    await expect(patchFile(scope, { path: "math.js", old_string: "add", new_string: "add" })).rejects.toThrow(
      /the same/,
    );
    await expect(patchFile(scope, { path: "math.js", old_string: "", new_string: "x" })).rejects.toThrow(
      /use write_file/,
    );
    await expect(patchFile(scope, { path: "nope.js", old_string: "a", new_string: "b" })).rejects.toThrow(
      /does not exist; to create a file use write_file/,
    );
    await put("bin.dat", Buffer.from([1, 2, 0, 3]));
    await expect(patchFile(scope, { path: "bin.dat", old_string: "a", new_string: "b" })).rejects.toThrow(
      /binary/,
    );
  });
});

function hasRipgrep(): boolean {
  try {
    execFileSync("rg", ["--version"]);
    return true;
  } catch {
    return false;
  }
}

/** Writes `content` at `rel` under `dir`, making folders. */
async function fileIn(dir: string, rel: string, content: string | Uint8Array): Promise<void> {
  await mkdir(join(dir, rel, ".."), { recursive: true });
  await writeRaw(join(dir, rel), content);
}

describe.runIf(hasRipgrep())("searchFiles: ripgrep and find/grep agree", () => {
  let tree: FileScope;

  beforeAll(async () => {
    const dir = join(base, "tree");
    const file = (rel: string, content: string | Uint8Array) => fileIn(dir, rel, content);
    await file("src/app.ts", "import { helper } from './lib/helper';\nexport const TODO_APP = helper(1);\n");
    await file(
      "src/lib/helper.ts",
      "// TODO: speed up\nexport function helper(n: number) {\n  return n * 2;\n}\n",
    );
    await file("src/styles/main.css", "body { color: red; } /* todo */\n");
    await file("docs/README.md", "# Helper\nTODO: write docs\n");
    await file("keep.log", "TODO kept log\n");
    await file("node_modules/pkg/index.js", "TODO dependency\n");
    await file(".hidden/notes.txt", "TODO hidden\n");
    await file("image.bin", Buffer.concat([Buffer.from("TODO"), Buffer.from([0, 1, 2, 3])]));
    for (let i = 0; i < 30; i++) await file(`many/file-${String(i).padStart(2, "0")}.txt`, `needle ${i}\n`);
    // Lines cut for the output, CRLF line ends, and a file over 1 MB (the JS walk streams it).
    await file("wide/long.txt", `WIDE ${"é".repeat(5000)}\nshort WIDE\n`);
    await file("wide/crlf.txt", "WIDE one\r\nnot here\r\nWIDE two\r\n");
    await file(
      "wide/big.txt",
      `${"filler line\n".repeat(100_000)}WIDE in a big file\n${"more\n".repeat(10)}`,
    );
    await symlink(join(dir, "src/app.ts"), join(dir, "link-to-app.ts"));
    tree = createFileScope(dir);
  });

  const queries: [string, Parameters<typeof searchFiles>[1]][] = [
    ["content everywhere", { pattern: "TODO", content: true }],
    ["content, ignoring case", { pattern: "todo", content: true, ignoreCase: true }],
    ["content under a path", { pattern: "TODO", content: true, path: "src" }],
    ["content with a base-name glob", { pattern: "helper", content: true, glob: "*.ts" }],
    ["content with a path glob", { pattern: "TODO", content: true, glob: "src/**/*.ts" }],
    ["content regex", { pattern: "^export (const|function) \\w+", content: true }],
    ["content in one file", { pattern: "return", content: true, path: "src/lib/helper.ts" }],
    ["names by glob", { pattern: "*.ts" }],
    ["names by substring", { pattern: "help" }],
    ["names by regex", { pattern: "file-0[0-4]\\.txt$" }],
    ["names by path glob", { pattern: "src/**/*.css" }],
    ["names limited", { pattern: "*.txt", limit: 5 }],
    ["content limited", { pattern: "needle", content: true, limit: 3 }],
    ["no match", { pattern: "nothing-here-at-all", content: true }],
    ["long lines, CRLF and a large file", { pattern: "WIDE", content: true }],
    ["a line's end, CRLF included", { pattern: "(one|WIDE)$", content: true }],
  ];

  it.each(queries)("%s", async (_label, args) => {
    const withRg = await searchFiles(tree, args, { engine: "ripgrep" });
    const withGrep = await searchFiles(tree, args, { engine: "grep" });
    expect(withGrep).toBe(withRg);
  });

  it("skips hidden entries, binaries, node_modules and symlinks with either", async () => {
    for (const engine of ["ripgrep", "grep"] as const) {
      const out = await searchFiles(tree, { pattern: "TODO", content: true }, { engine });
      expect(out).toBe(
        [
          "docs/README.md:2: TODO: write docs",
          "keep.log:1: TODO kept log",
          "src/app.ts:2: export const TODO_APP = helper(1);",
          "src/lib/helper.ts:1: // TODO: speed up",
          "(4 matching lines in 4 files)",
        ].join("\n"),
      );
    }
  });

  it("with ripgrep honours .gitignore (nested, negated, anchored)", async () => {
    const dir = join(base, "ignored");
    await fileIn(dir, ".gitignore", "dist/\n*.log\n/secret.txt\n!keep.log\n");
    await fileIn(dir, "src/lib/.gitignore", "generated.ts\n");
    await fileIn(dir, "src/lib/generated.ts", "// TODO generated\n");
    await fileIn(dir, "src/app.ts", "// TODO app\n");
    await fileIn(dir, "debug.log", "TODO in a log\n");
    await fileIn(dir, "keep.log", "TODO kept log\n");
    await fileIn(dir, "secret.txt", "TODO secret\n");
    await fileIn(dir, "dist/bundle.js", "TODO bundled\n");
    const out = await searchFiles(
      createFileScope(dir),
      { pattern: "TODO", content: true },
      { engine: "ripgrep" },
    );
    expect(out).toBe(
      ["keep.log:1: TODO kept log", "src/app.ts:1: // TODO app", "(2 matching lines in 2 files)"].join("\n"),
    );
  });

  it("caps results and counts the rest", async () => {
    const out = await searchFiles(tree, { pattern: "needle", content: true, limit: 3 }, { engine: "grep" });
    expect(out).toBe(
      [
        "many/file-00.txt:1: needle 0",
        "many/file-01.txt:1: needle 1",
        "many/file-02.txt:1: needle 2",
        "(30 matching lines in 30 files; 27 more not shown: narrow the pattern, path or glob)",
      ].join("\n"),
    );
  });

  it("says when a regular expression is invalid", async () => {
    for (const engine of ["ripgrep", "grep"] as const)
      await expect(searchFiles(tree, { pattern: "([", content: true }, { engine })).rejects.toMatchObject({
        code: "invalid_input",
      });
  });

  it("stays inside the workspace", async () => {
    await expect(searchFiles(tree, { pattern: "x", path: "../ws" })).rejects.toThrow(/outside the workspace/);
  });
});
