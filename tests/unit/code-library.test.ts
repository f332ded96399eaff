/**
 * `execute_code`'s generated client libraries and where the tool is offered: Python functions with the
 * tool's parameters (required ones positional), names that cannot be functions reached through
 * `call`, a JavaScript module that a tool named `process` does not break; groups without `exec.groups`
 * get no `code` toolset (a script is code run in the sandbox, as `terminal` runs it).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { jsLibrary, pythonLibrary, type ToolSpec } from "../../agent/tools/code/index.js";
import { loadConfig } from "../../app/config.js";
import { toolsetsFor } from "../../app/toolsets.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const specs: ToolSpec[] = [
  {
    name: "read_file",
    description: 'Read a file "quoted"',
    parameters: {
      type: "object",
      properties: { path: { type: "string" }, offset: { type: "number" } },
      required: ["path"],
    },
  },
  {
    name: "weird",
    description: "x",
    parameters: { type: "object", properties: { from: { type: "string" } } },
  },
  { name: "process", description: "processes */ end", parameters: { type: "object", properties: {} } },
  { name: "mcp-server.tool", description: "dots", parameters: { type: "object", properties: {} } },
];

describe("the generated libraries", () => {
  it("Python: parameters as the tool names them, keywords through **args, odd names only via call", () => {
    dir = mkdtempSync(join(tmpdir(), "herald-pylib-"));
    writeFileSync(join(dir, "herald_tools.py"), pythonLibrary(specs));
    const probe = [
      "import inspect, herald_tools as h",
      "print(inspect.signature(h.read_file))",
      "print(inspect.signature(h.weird))",
      "print(h.read_file.__doc__)",
      "print(sorted(h.TOOLS))",
    ].join("\n");
    const out = execFileSync("python3", ["-c", probe], {
      cwd: dir,
      env: { PATH: process.env["PATH"] ?? "", HERALD_TOOLS_SOCKET: "/nowhere", HERALD_TOOLS_TOKEN: "t" },
      encoding: "utf8",
    });
    expect(out.split("\n")).toEqual([
      "(path, offset=None)",
      "(**args)",
      'Read a file "quoted"',
      "['process', 'read_file', 'weird']",
      "",
    ]);
  });

  it("JavaScript: one export per tool; a tool named process does not shadow the library's process", () => {
    dir = mkdtempSync(join(tmpdir(), "herald-jslib-"));
    writeFileSync(join(dir, "index.mjs"), jsLibrary(specs));
    const out = execFileSync(
      "node",
      [
        "--input-type=module",
        "-e",
        `const m = await import(${JSON.stringify(join(dir, "index.mjs"))}); console.log(Object.keys(m).sort().join(","))`,
      ],
      {
        env: { PATH: process.env["PATH"] ?? "", HERALD_TOOLS_SOCKET: "/nowhere", HERALD_TOOLS_TOKEN: "t" },
        encoding: "utf8",
      },
    );
    expect(out.trim()).toBe("ToolError,__finish,call,process,read_file,weird");
  });
});

describe("where execute_code is offered", () => {
  it("DMs get the code toolset; groups only with exec.groups", () => {
    dir = mkdtempSync(join(tmpdir(), "herald-code-toolsets-"));
    const config = loadConfig({ env: { HERALD_HOME: dir } });
    expect(toolsetsFor(config, "telegram", "dm")).toContain("code");
    expect(toolsetsFor(config, "telegram", "group")).not.toContain("code");
    const open = loadConfig({ env: { HERALD_HOME: dir, HERALD_EXEC_GROUPS: "true" } });
    expect(toolsetsFor(open, "telegram", "group")).toContain("code");
  });
});
