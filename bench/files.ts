/**
 * The file tools' cost through the execution backend: reading and writing 10 KB through each backend's
 * `WorkspaceFiles` alone (the sandbox's file helper, the same in one command per call with coreutils,
 * and direct I/O on the host as the gateway did before), and `read_file` / `write_file` of 10 KB through
 * the whole gateway (its own process, as `npm start` runs it): a turn with the tool call minus a turn
 * without.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  LocalWorkspaceFiles,
  SandboxBackend,
  ShellWorkspaceFiles,
  type WorkspaceFiles,
} from "../agent/exec/index.js";
import type { FakeLlmRequest } from "../tests/fakes/llm/index.js";
import { startFakeLlm } from "../tests/fakes/llm/index.js";
import { machineLine, percentile, postTurn, round, spawnGateway, startFlags } from "./lib.js";

export interface FilesBenchOptions {
  root: string;
  /** Calls per series through the files API. */
  calls: number;
  /** Turns per series through the gateway. */
  turns: number;
}

/** One way of reaching a workspace's files, measured alone. */
export interface FilesApiResult {
  via: string;
  /** The first call (starts the sandbox's helper where there is one), ms. */
  firstCallMs: number;
  readP50Ms: number;
  readP99Ms: number;
  writeP50Ms: number;
  writeP99Ms: number;
}

/** `read_file` and `write_file` through the gateway, per backend. */
export interface FilesToolResult {
  backend: string;
  plainP50Ms: number;
  readOverheadP50Ms: number;
  readOverheadP99Ms: number;
  writeOverheadP50Ms: number;
  writeOverheadP99Ms: number;
}

export interface FilesBenchResult {
  api: FilesApiResult[];
  tools: FilesToolResult[];
}

const TEN_KB = Buffer.alloc(10 * 1024, "x");
const READ_MARK = "read-10k";
const WRITE_MARK = "write-10k";

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

async function measureApi(via: string, files: WorkspaceFiles, calls: number): Promise<FilesApiResult> {
  const firstCallMs = await timed(() => files.write("bench.txt", TEN_KB));
  const reads: number[] = [];
  const writes: number[] = [];
  for (let i = 0; i < calls; i++) {
    reads.push(await timed(() => files.read("bench.txt", { offset: 0, length: TEN_KB.length })));
    writes.push(await timed(() => files.write("bench.txt", TEN_KB)));
  }
  const p = (values: number[], q: number) => round(percentile(values, q));
  return {
    via,
    firstCallMs: round(firstCallMs),
    readP50Ms: p(reads, 50),
    readP99Ms: p(reads, 99),
    writeP50Ms: p(writes, 50),
    writeP99Ms: p(writes, 99),
  };
}

/** The fake model: a marked message asks for the file tool, its result gets a short answer. */
function model(request: FakeLlmRequest) {
  const last = request.messages.at(-1);
  if (last?.role === "tool") return { text: "done" };
  const text = typeof last?.content === "string" ? last.content : "";
  if (text.startsWith(READ_MARK))
    return { toolCalls: [{ name: "read_file", arguments: { path: "bench.txt" } }] };
  if (text.startsWith(WRITE_MARK))
    return {
      toolCalls: [{ name: "write_file", arguments: { path: "bench.txt", content: TEN_KB.toString("utf8") } }],
    };
  return { text: "ok" };
}

export async function benchFiles(options: FilesBenchOptions): Promise<FilesBenchResult> {
  const dir = join(mkdtempSync(join(tmpdir(), "herald-bench-files-")), "ws");
  const ws = { key: "bench", dir };
  const sandbox = new SandboxBackend();
  await sandbox.prepare(ws);
  const api = [
    await measureApi(
      "sandbox: file helper in the sandbox (what the tools use)",
      sandbox.files(ws),
      options.calls,
    ),
    await measureApi(
      "sandbox: one command per call (coreutils head/cat/mv in bwrap)",
      new ShellWorkspaceFiles(sandbox, ws, "/workspace"),
      options.calls,
    ),
    await measureApi(
      "direct I/O on the host (the gateway before; `local` now)",
      new LocalWorkspaceFiles(ws),
      options.calls,
    ),
  ];
  await sandbox.close();

  const llm = await startFakeLlm({ keepRequests: false });
  llm.setDefault(model);
  const tools: FilesToolResult[] = [];
  try {
    for (const backend of ["local", "sandbox"]) {
      const gw = await spawnGateway(
        {
          OPENAI_BASE_URL: llm.url,
          OPENAI_API_KEY: "bench",
          HERALD_MODEL: "fake-model",
          HERALD_EXEC_BACKEND: backend,
        },
        options.root,
        startFlags(options.root),
      );
      try {
        const session = (i: number) => `files-${i % 10}`;
        for (let i = 0; i < 10; i++) await postTurn(gw.url, `${WRITE_MARK} warm`, session(i));
        const plain: number[] = [];
        const read: number[] = [];
        const write: number[] = [];
        // Interleaved, so the machine's noise weighs on every series alike.
        for (let i = 0; i < options.turns; i++) {
          plain.push(await timed(() => postTurn(gw.url, `plain ${i}`, session(i))));
          read.push(await timed(() => postTurn(gw.url, `${READ_MARK} ${i}`, session(i))));
          write.push(await timed(() => postTurn(gw.url, `${WRITE_MARK} ${i}`, session(i))));
        }
        const over = (values: number[], q: number) => round(percentile(values, q) - percentile(plain, q));
        tools.push({
          backend,
          plainP50Ms: round(percentile(plain, 50)),
          readOverheadP50Ms: over(read, 50),
          readOverheadP99Ms: over(read, 99),
          writeOverheadP50Ms: over(write, 50),
          writeOverheadP99Ms: over(write, 99),
        });
      } finally {
        await gw.stop();
      }
    }
  } finally {
    await llm.close();
  }
  return { api, tools };
}

export function filesMarkdown(result: FilesBenchResult, options: FilesBenchOptions, command: string): string {
  const apiRows = result.api.map(
    (r) =>
      `| ${r.via} | ${r.firstCallMs} ms | **${r.readP50Ms}** / ${r.readP99Ms} ms | **${r.writeP50Ms}** / ${r.writeP99Ms} ms |`,
  );
  const toolRows = result.tools.map(
    (r) =>
      `| ${r.backend} | ${r.plainP50Ms} ms | **${r.readOverheadP50Ms}** / ${r.readOverheadP99Ms} ms | **${r.writeOverheadP50Ms}** / ${r.writeOverheadP99Ms} ms |`,
  );
  return `## File tools through the execution backend

Command: \`${command}\` — ${machineLine()}. The file tools read and write where the commands run: in the
sandbox through a file helper (node, started on first use per workspace, ended after 30 s idle). First,
${options.calls} reads and ${options.calls} writes of 10 KB through each way alone (a write is atomic: a
temporary file, fdatasync, rename):

| way | first call | read 10 KB p50 / p99 | write 10 KB p50 / p99 |
|---|---|---|---|
${apiRows.join("\n")}

Then through the gateway (its own process, npm start's flags; the fake model asks for the tool and then
answers), ${options.turns} turns each with \`read_file\` of a 10 KB file, \`write_file\` of 10 KB, and no
tool, interleaved; the overhead is a turn with the tool minus a turn without (it includes the second
model round trip):

| backend | turn without a tool p50 | \`read_file\` 10 KB overhead p50 / p99 | \`write_file\` 10 KB overhead p50 / p99 |
|---|---|---|---|
${toolRows.join("\n")}

Target: file tool overhead ≤ 10 ms p50 in the sandbox for read 10 KB and write 10 KB. One command per
call costs a sandbox's start (bubblewrap, namespaces) each time, the helper one pipe round trip: the
tools use the helper. Most of a write is the fdatasync of its temporary file, on every way alike.`;
}
