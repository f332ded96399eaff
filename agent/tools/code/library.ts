/**
 * The client libraries `execute_code` writes beside a script: `herald_tools.py` (Python) and the
 * `herald-tools` module (JavaScript), one function per tool the turn may call, each a request over the
 * execution's Unix socket (`HERALD_TOOLS_SOCKET`, with `HERALD_TOOLS_TOKEN`), and the runners that run
 * the script and send its return value back. Generated per execution from the tools' JSON Schemas.
 */

/** A tool as the libraries describe it. */
export interface ToolSpec {
  name: string;
  description: string;
  /** The arguments' JSON Schema (an object schema). */
  parameters: Record<string, unknown>;
}

const PY_KEYWORDS = new Set(
  "False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield call".split(
    " ",
  ),
);
const JS_RESERVED = new Set(
  "break case catch class const continue debugger default delete do else enum export extends false finally for function if import in instanceof new null return super switch this throw true try typeof var void while with yield let static implements interface package private protected public await call rpc SOCKET TOKEN ToolError createConnection".split(
    " ",
  ),
);
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The names a library may define as functions (the rest are reached through `call`). */
export function callableName(name: string, reserved: ReadonlySet<string>): boolean {
  return IDENTIFIER.test(name) && !reserved.has(name) && !name.startsWith("_");
}

function params(spec: ToolSpec): { required: string[]; optional: string[] } {
  const props = Object.keys((spec.parameters["properties"] as Record<string, unknown> | undefined) ?? {});
  const req = new Set((spec.parameters["required"] as string[] | undefined) ?? []);
  return { required: props.filter((p) => req.has(p)), optional: props.filter((p) => !req.has(p)) };
}

const PY_CORE = `"""Herald's tools, callable from this script. Each call runs as an ordinary tool call of the turn
(the same approvals, owner rules and limits) and returns the tool's text. A call that is refused (not
callable from code, needs the user's approval, over the call budget) raises ToolError."""
import json as _json
import os as _os
import socket as _socket

_SOCKET = _os.environ["HERALD_TOOLS_SOCKET"]
_TOKEN = _os.environ["HERALD_TOOLS_TOKEN"]


class ToolError(Exception):
    """A tool call that was refused; the message says why."""


def _rpc(message):
    with _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM) as s:
        s.connect(_SOCKET)
        with s.makefile("rwb") as f:
            f.write((_json.dumps(dict(message, token=_TOKEN)) + "\\n").encode("utf-8"))
            f.flush()
            line = f.readline()
    if not line:
        raise ToolError("the gateway ended the connection (the execution is over)")
    return _json.loads(line)


def call(name, **args):
    """Calls the tool \`name\` with keyword arguments; returns its text (an error's text starts with 'error:')."""
    answer = _rpc({"type": "call", "tool": name, "args": {k: v for k, v in args.items() if v is not None}})
    if not answer.get("ok"):
        raise ToolError(answer.get("error", "refused"))
    return answer["content"]


def _finish(value):
    try:
        text = _json.dumps(value)
    except (TypeError, ValueError):
        text = _json.dumps(repr(value))
    _rpc({"type": "result", "value": text})
`;

function pyFunction(spec: ToolSpec): string {
  const { required, optional } = params(spec);
  const names = [...required, ...optional];
  const doc = `    ${JSON.stringify(spec.description)}`;
  if (!names.every((n) => callableName(n, PY_KEYWORDS)))
    return `def ${spec.name}(**args):\n${doc}\n    return call(${JSON.stringify(spec.name)}, **args)\n`;
  const signature = [...required, ...optional.map((o) => `${o}=None`)].join(", ");
  const pass = names.map((n) => `${n}=${n}`).join(", ");
  return `def ${spec.name}(${signature}):\n${doc}\n    return call(${JSON.stringify(spec.name)}${pass ? `, ${pass}` : ""})\n`;
}

/** `herald_tools.py` for `tools`. */
export function pythonLibrary(tools: readonly ToolSpec[]): string {
  const fns = tools.filter((t) => callableName(t.name, PY_KEYWORDS));
  const table = `TOOLS = {${fns.map((t) => `${JSON.stringify(t.name)}: ${t.name}`).join(", ")}}\n`;
  return [PY_CORE, ...fns.map(pyFunction), table].join("\n\n");
}

/**
 * Runs `code.py` beside it with the tools in scope; the value of a last bare expression is the
 * script's return value.
 */
export const PYTHON_RUNNER = `import ast, os, sys
import herald_tools as _h

def _main():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "code.py")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    scope = {"__name__": "__main__", "ToolError": _h.ToolError, "call": _h.call, **_h.TOOLS}
    exec(compile(tree, path, "exec"), scope)
    value = eval(compile(last, path, "eval"), scope) if last is not None else None
    sys.stdout.flush()
    _h._finish(value)

_main()
`;

const JS_CORE = `// Herald's tools, callable from this script. Each call runs as an ordinary tool call of the turn
// (the same approvals, owner rules and limits) and resolves with the tool's text. A call that is refused
// (not callable from code, needs the user's approval, over the call budget) rejects with ToolError.
import { createConnection } from "node:net";

// globalThis: a tool may be named \`process\`.
const SOCKET = globalThis.process.env.HERALD_TOOLS_SOCKET;
const TOKEN = globalThis.process.env.HERALD_TOOLS_TOKEN;

export class ToolError extends Error {}

function rpc(message) {
  return new Promise((resolve, reject) => {
    const s = createConnection(SOCKET);
    let buffer = "";
    s.setEncoding("utf8");
    s.on("connect", () => s.write(JSON.stringify({ ...message, token: TOKEN }) + "\\n"));
    s.on("data", (d) => {
      buffer += d;
      const end = buffer.indexOf("\\n");
      if (end >= 0) {
        s.end();
        resolve(JSON.parse(buffer.slice(0, end)));
      }
    });
    s.on("error", reject);
    s.on("close", () => {
      if (!buffer.includes("\\n")) reject(new ToolError("the gateway ended the connection (the execution is over)"));
    });
  });
}

/** Calls the tool \`name\` with an arguments object; resolves with its text (an error's text starts with 'error:'). */
export async function call(name, args = {}) {
  const clean = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined && v !== null));
  const answer = await rpc({ type: "call", tool: name, args: clean });
  if (!answer.ok) throw new ToolError(answer.error ?? "refused");
  return answer.content;
}

export async function __finish(value) {
  let text;
  try {
    text = JSON.stringify(value === undefined ? null : value);
  } catch {
    text = JSON.stringify(String(value));
  }
  await rpc({ type: "result", value: text ?? "null" });
}
`;

/** The `herald-tools` module (`index.mjs`) for `tools`. */
export function jsLibrary(tools: readonly ToolSpec[]): string {
  const fns = tools
    .filter((t) => callableName(t.name, JS_RESERVED))
    .map((t) => {
      const doc = t.description.replace(/\*\//g, "* /");
      return `/** ${doc} */\nexport const ${t.name} = (args = {}) => call(${JSON.stringify(t.name)}, args);\n`;
    });
  return [JS_CORE, ...fns].join("\n");
}

/** Imports `code.mjs` beside it (an ES module: imports and top-level await) and sends its default export. */
export const JS_RUNNER = `import { __finish } from "herald-tools";
const code = await import("./code.mjs");
await __finish(await code.default);
`;

/** `package.json` of the `herald-tools` module. */
export const JS_PACKAGE = `${JSON.stringify({ name: "herald-tools", type: "module", exports: "./index.mjs" })}\n`;
