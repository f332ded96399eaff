/**
 * `execute_code`'s reach: model requests and tokens of a 20-step file task (read twenty files, count
 * the lines that mention an error, report the count) done with one `read_file` call per step, and done
 * as one script; and what one tool call from a script costs, measured inside the script (Python and
 * JavaScript) around each call over the socket. The whole gateway runs in-process (API server, agent
 * loop, the bubblewrap sandbox) against the scripted fake model, whose token counts are a quarter of
 * the characters sent and received.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../app/config.js";
import { startGateway } from "../app/gateway-main.js";
import { silentLogger } from "../core/logger.js";
import { type FakeLlm, type FakeLlmStep, startFakeLlm } from "../tests/fakes/llm/index.js";
import { machineLine } from "./lib.js";

export interface CodeBenchOptions {
  /** Files (and steps) of the task. */
  files: number;
  /** Tool calls one script makes to measure the per-call cost. */
  calls: number;
}

export interface TaskFigures {
  requests: number;
  promptTokens: number;
  completionTokens: number;
}

export interface CodeBenchResult {
  stepwise: TaskFigures;
  script: TaskFigures;
  /** Per tool call from a script (`todo list`): median and p90 in ms, as the script timed it. */
  python: { p50Ms: number; p90Ms: number };
  javascript: { p50Ms: number; p90Ms: number };
}

const setupCommand = (files: number) =>
  `mkdir -p logs && for i in $(seq 1 ${files}); do for j in $(seq 1 40); do if [ $((j % 7)) -eq 0 ]; then echo "line $j of $i: error: disk quota near its limit on volume $j"; else echo "line $j of $i: request served in $j ms by worker $((j % 4))"; fi; done > logs/$i.log; done`;

const taskScript = (files: number) =>
  [
    "total = 0",
    `for i in range(1, ${files + 1}):`,
    '    text = read_file(path=f"logs/{i}.log")',
    '    total += sum(1 for line in text.splitlines() if "error:" in line)',
    "total",
  ].join("\n");

const timingPython = (calls: number) =>
  [
    "import time",
    "times = []",
    `for _ in range(${calls}):`,
    "    t = time.perf_counter()",
    '    todo(action="list")',
    "    times.append((time.perf_counter() - t) * 1000)",
    "times.sort()",
    "[round(times[len(times) // 2], 3), round(times[int(len(times) * 0.9)], 3)]",
  ].join("\n");

const timingJs = (calls: number) =>
  [
    'import { todo } from "herald-tools";',
    "const times = [];",
    `for (let i = 0; i < ${calls}; i++) {`,
    "  const t = performance.now();",
    '  await todo({ action: "list" });',
    "  times.push(performance.now() - t);",
    "}",
    "times.sort((a, b) => a - b);",
    "export default [times[Math.floor(times.length / 2)], times[Math.floor(times.length * 0.9)]].map((v) => Math.round(v * 1000) / 1000);",
  ].join("\n");

async function turn(
  url: string,
  text: string,
  sessionId?: string,
): Promise<{ sessionId: string; text: string }> {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(sessionId ? { "x-herald-session-id": sessionId } : {}),
    },
    body: JSON.stringify({ model: "herald", messages: [{ role: "user", content: text }] }),
  });
  if (res.status !== 200) throw new Error(`turn answered ${res.status}`);
  const body = (await res.json()) as { choices: { message: { content: string } }[] };
  return {
    sessionId: res.headers.get("x-herald-session-id") ?? "",
    text: body.choices[0]?.message.content ?? "",
  };
}

/** One measured turn after a setup turn that writes the files; the figures of the measured turn only. */
async function task(llm: FakeLlm, url: string, files: number, steps: FakeLlmStep[]): Promise<TaskFigures> {
  llm.script(
    { toolCalls: [{ name: "terminal", arguments: { command: setupCommand(files) } }] },
    { text: "ready" },
  );
  const { sessionId } = await turn(url, "write the logs");
  const from = llm.usages.length;
  llm.script(...steps);
  await turn(url, `How many lines of the ${files} logs mention an error?`, sessionId);
  const usages = llm.usages.slice(from);
  return {
    requests: usages.length,
    promptTokens: usages.reduce((n, u) => n + u.prompt_tokens, 0),
    completionTokens: usages.reduce((n, u) => n + u.completion_tokens, 0),
  };
}

async function perCall(llm: FakeLlm, url: string, language: string, code: string) {
  llm.script({ toolCalls: [{ name: "execute_code", arguments: { language, code } }] }, (r) => ({
    text: String(r.messages.at(-1)?.content ?? ""),
  }));
  const { text } = await turn(url, "time the calls");
  const value = /return value: \[([\d.]+), ?([\d.]+)\]/.exec(text);
  if (!value) throw new Error(`no timings in: ${text.slice(0, 500)}`);
  return { p50Ms: Number(value[1]), p90Ms: Number(value[2]) };
}

export async function benchCode(options: CodeBenchOptions): Promise<CodeBenchResult> {
  const llm = await startFakeLlm();
  const homeDir = mkdtempSync(join(tmpdir(), "herald-bench-code-"));
  const config = loadConfig({
    env: {
      HERALD_HOME: homeDir,
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "bench",
      HERALD_MODEL: "fake-model",
      API_SERVER_PORT: "0",
      HERALD_LOG_LEVEL: "silent",
      HERALD_LEARNING_ENABLED: "false",
      HERALD_CODE_MAX_TOOL_CALLS: String(Math.max(options.calls, options.files) + 10),
    },
  });
  const gateway = await startGateway(config, { logger: silentLogger() });
  try {
    const url = `${gateway.http?.url}/v1/chat/completions`;
    const reads: FakeLlmStep[] = Array.from({ length: options.files }, (_, i) => ({
      toolCalls: [{ name: "read_file", arguments: { path: `logs/${i + 1}.log` } }],
    }));
    const stepwise = await task(llm, url, options.files, [...reads, { text: "120 lines mention an error." }]);
    const script = await task(llm, url, options.files, [
      {
        toolCalls: [
          { name: "execute_code", arguments: { language: "python", code: taskScript(options.files) } },
        ],
      },
      { text: "120 lines mention an error." },
    ]);
    const python = await perCall(llm, url, "python", timingPython(options.calls));
    const javascript = await perCall(llm, url, "javascript", timingJs(options.calls));
    return { stepwise, script, python, javascript };
  } finally {
    await gateway.stop();
    await llm.close();
    rmSync(homeDir, { recursive: true, force: true });
  }
}

export function codeMarkdown(r: CodeBenchResult, o: CodeBenchOptions, command: string): string {
  const total = (f: TaskFigures) => f.promptTokens + f.completionTokens;
  const row = (name: string, f: TaskFigures) =>
    `| ${name} | ${f.requests} | ${f.promptTokens.toLocaleString("en-US")} | ${f.completionTokens.toLocaleString("en-US")} | ${total(f).toLocaleString("en-US")} |`;
  return [
    "## execute_code",
    "",
    `\`${command}\` on ${machineLine()}. The whole gateway in-process (API server, agent loop, bubblewrap sandbox) against the scripted fake model, which counts a token per 4 characters.`,
    "",
    `A ${o.files}-step file task: read ${o.files} logs of 40 lines (written by a setup turn, not counted) and count the lines that mention an error. Step by step the model calls \`read_file\` once per step; with \`execute_code\` it sends one Python script that reads all of them and returns the count.`,
    "",
    "| way | model requests | prompt tokens | completion tokens | total tokens |",
    "|---|---|---|---|---|",
    row("one read_file per step", r.stepwise),
    row("one execute_code script", r.script),
    "",
    `Ratio: ${(r.stepwise.requests / r.script.requests).toFixed(1)}× fewer requests, ${(total(r.stepwise) / total(r.script)).toFixed(1)}× fewer tokens with the script.`,
    "",
    `One tool call from a script (\`todo list\`, a SQLite read), timed by the script around each of ${o.calls} calls: connect to the socket, the request, the call run as a call of the turn (hooks, progress event), the answer.`,
    "",
    "| script | median ms per call | p90 ms per call |",
    "|---|---|---|",
    `| Python | ${r.python.p50Ms} | ${r.python.p90Ms} |`,
    `| JavaScript | ${r.javascript.p50Ms} | ${r.javascript.p90Ms} |`,
  ].join("\n");
}
