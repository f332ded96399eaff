/**
 * The approval rules for what cannot be read before it runs: everyday commands still run without a
 * prompt, every rule a line matched is reported, and text written to a background process is read as
 * its reader reads it (a shell's commands across several writes, an interpreter's code, SQL).
 */
import { describe, expect, it } from "vitest";
import {
  ApprovalStore,
  classifyCommand,
  classifyWrite,
  stdinReaders,
} from "../../agent/exec/approvals/index.js";
import type { KeyValueStore } from "../../core/types.js";

const workspaceDir = "/work/ws";

/** Everyday commands an agent runs: none of them may prompt. */
const BENIGN: string[] = [
  "ls",
  "npm test",
  "git status",
  "cat x | grep y",
  'for f in *.ts; do wc -l "$f"; done',
  "npm run build && npm test",
  "git diff | head -50",
  "grep -rn foo src | wc -l",
  "find . -name '*.ts' | head",
  "python3 script.py",
  "node index.js",
  "bash build.sh",
  "./configure && make",
  "sh ./run.sh",
  "chmod +x script.sh && ./script.sh",
  'echo "$HOME"',
  "export FOO=bar && npm test",
  "x=$(git rev-parse HEAD); echo $x",
  "if [ -f package.json ]; then npm ci; fi",
  'case "$1" in start) echo go;; stop|halt) echo stop;; *) echo no;; esac',
  'while read -r l; do echo "$l"; done < file.txt',
  "source .venv/bin/activate && pytest",
  ". ./env.sh",
  "curl -s https://example.com/api | jq .",
  "cat package.json | python3 -m json.tool",
  "tar xzf a.tgz",
  "pip install -r requirements.txt",
  "find . -name '*.pyc' -delete",
  "printf '%s\\n' a b | sort",
  "[ -d x ] || mkdir x",
  "[[ -n $x ]] && echo y",
  "make -j4 && cargo test && go test ./...",
  "python3 -m pytest -q",
  "npx tsc --noEmit",
  "echo hello > out.txt && cat out.txt",
  "cat <<EOF > notes.md\n$X\nEOF",
  "ls | xargs -n1 echo",
  "git ls-files | xargs wc -l",
  "time npm test",
  "nohup npm start > log 2>&1 &",
  "timeout 10 npm test",
  "npm test 2>&1 | tail -20",
  "awk '{print $1}' file",
  "awk -F: '/err|warn/ {print $2}' file",
  "wc -l $(git ls-files)",
  "echo $((1 + 2))",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's ${#files[@]}, not a template
  "files=(*.ts); echo ${#files[@]}",
  "diff <(sort a) <(sort b)",
  'export PATH="$HOME/.cargo/bin:$PATH" && cargo build',
  "FOO=1 npm test",
  "rm -f *.tmp",
  "trap 'echo done' EXIT; npm test",
  "curl -o data.json https://example.com/data.json && jq . data.json",
  "wget https://example.com/a.tgz && tar xzf a.tgz",
  "sh -c 'echo \"$1\"' _ hello",
  "bash -c 'npm ci && npm test'",
];

function kv(): KeyValueStore {
  const map = new Map<string, string>();
  return { get: (k) => map.get(k), set: (k, v) => void map.set(k, v), delete: (k) => void map.delete(k) };
}

describe("what cannot be read", () => {
  it.each(BENIGN)("lets %j run without asking", (command) => {
    expect(classifyCommand(command, { workspaceDir })).toEqual({ dangerous: false });
  });

  it("reports every rule a line matched; 'always' lets it through only when all of them were granted", () => {
    const verdict = classifyCommand("python3 -c 'print(1)'; x=rm; $x -rf /tmp/canary", { workspaceDir });
    if (!verdict.dangerous) throw new Error("expected a match");
    const ids = verdict.rules.map((r) => r.id);
    expect(ids).toEqual(["command-from-expansion", "interpreter-inline-code"]);
    const store = new ApprovalStore(kv(), 60_000);
    const chat = { platform: "api", chatId: "c" };
    const base = { sessionKey: "k", sessionId: "s", chat, userId: "u", ruleDescription: "d" };
    store.request({ ...base, command: "python3 -c 'print(1)'", ruleId: "interpreter-inline-code" });
    store.approve("k", true);
    expect(store.check("k", "python3 -c 'print(2)'", ["interpreter-inline-code"])).toBe(true);
    expect(store.check("k", "anything", ids)).toBe(false);
  });

  it("reads brace lists and case patterns as the shell does", () => {
    expect(classifyCommand("{rm,-rf,/tmp/canary}")).toMatchObject({
      rule: { id: "recursive-delete-outside-workspace" },
    });
    expect(classifyCommand("rm {-rf,/tmp/canary}")).toMatchObject({
      rule: { id: "recursive-delete-outside-workspace" },
    });
    expect(classifyCommand("case $1 in *) echo any;; esac").dangerous).toBe(false);
    expect(classifyCommand("a=($(rm -rf /tmp/canary))").dangerous).toBe(true);
    expect(classifyCommand('a="-rf /tmp/canary"; rm $a').dangerous).toBe(true);
  });
});

describe("text written to a background process", () => {
  const write = (process: string, data: string, pending = "") =>
    classifyWrite(process, pending, data, { workspaceDir });

  it("knows who reads code from stdin", () => {
    expect([...stdinReaders("bash")]).toEqual(["shell"]);
    expect([...stdinReaders("cat | sh")]).toEqual(["shell"]);
    expect([...stdinReaders("python3 -i")]).toEqual(["interpreter"]);
    expect([...stdinReaders("node")]).toEqual(["interpreter"]);
    expect([...stdinReaders("psql app")]).toEqual(["sql"]);
    expect([...stdinReaders("ssh build-host")]).toEqual(["shell"]);
    expect([...stdinReaders("$SHELL")]).toEqual(["interpreter"]);
    expect([...stdinReaders("cat > log.txt")]).toEqual([]);
    expect([...stdinReaders("npm run dev")]).toEqual([]);
    expect([...stdinReaders("bash serve.sh")]).toEqual([]);
  });

  it("reads a shell's input as commands, across writes, and asks for what it cannot read", () => {
    expect(write("bash", "ls -la\n")).toEqual({ verdict: { dangerous: false }, pending: "" });
    expect(write("bash", "rm -rf /tmp/canary\n").verdict).toMatchObject({
      rule: { id: "recursive-delete-outside-workspace" },
    });
    expect(write("bash -i", "x=rm; $x -rf /tmp/canary\n").verdict).toMatchObject({
      rule: { id: "command-from-expansion" },
    });
    // A command sent in pieces is read whole: nothing runs until its line ends.
    const first = write("bash", "rm -rf ");
    expect(first).toEqual({ verdict: { dangerous: false }, pending: "rm -rf " });
    expect(write("bash", "/tmp/canary\n", first.pending).verdict.dangerous).toBe(true);
    // An open quote keeps the line open across a newline: what follows is read with it.
    const quoted = write("bash", "echo 'x\n");
    expect(quoted.pending).toBe("echo 'x\n");
    expect(write("bash", "';rm -rf /tmp/canary\n", quoted.pending).verdict.dangerous).toBe(true);
  });

  it("asks for any code sent to an interpreter, and reads SQL for what destroys", () => {
    expect(write("python3 -i", "print(1)\n").verdict).toMatchObject({
      rule: { id: "interpreter-stdin-code" },
    });
    expect(write("psql app", "SELECT 1;\n")).toEqual({ verdict: { dangerous: false }, pending: "\n" });
    expect(write("psql app", "TABLE users;", "DROP ").verdict).toMatchObject({
      rule: { id: "sql-destructive" },
    });
    expect(write("cat > notes.txt", "rm -rf /tmp/canary\n")).toEqual({
      verdict: { dangerous: false },
      pending: "",
    });
  });
});
