/**
 * The terminal UI of `herald chat`. Three figures:
 * - keystroke to echo: the UI's real code (keys, model, layout, Ink) in this process, a keystroke
 *   written to its input every 50 ms (a fast typist), timed until the frame showing it is written;
 * - idle: the built `herald chat` (embedded gateway included) in a tmux pane, its CPU and the bytes it
 *   writes to the terminal over 10 s with nothing happening;
 * - a 500-line reply streamed in 4-character pieces as fast as they come: CPU for the whole reply,
 *   frames written, and the layout time per frame, beside rendering the whole reply once.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { createHighlighter, loadHighlighting } from "../adapters/cli/tui/highlight.js";
import { renderMarkdown } from "../adapters/cli/tui/markdown.js";
import { createTheme } from "../adapters/cli/tui/theme.js";
import type { ChatBackend, ChatEvent } from "../adapters/cli/types.js";
import { startFakeLlm } from "../tests/fakes/llm/index.js";
import { cpuSeconds, machineLine, median, percentile, round } from "./lib.js";

export interface TuiBenchOptions {
  root: string;
  keystrokes: number;
  replyLines: number;
  /** Milliseconds between two 4-character pieces of the streamed reply. */
  pieceMs: number;
  idleSeconds: number;
}

export interface TuiBenchResult {
  echoP50Ms: number;
  echoP99Ms: number;
  bytesPerEcho: number;
  idleCpuPercent: number;
  /** CPU over the idle window, ms (the kernel counts it in 10 ms ticks). */
  idleCpuMs: number;
  idleBytes: number;
  streamDeltas: number;
  streamFrames: number;
  streamCpuMs: number;
  frameLayoutP50Ms: number;
  frameLayoutP99Ms: number;
  wholeReplyRenderMs: number;
}

/** A terminal's output as the UI sees it: a TTY of 80 × 24 that keeps what was written, and when. */
class FakeTerminal extends Writable {
  readonly isTTY = true;
  columns = 80;
  rows = 24;
  writes: { at: number; text: string }[] = [];
  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: () => void): void {
    this.writes.push({ at: performance.now(), text: chunk.toString() });
    done();
  }
}

/** A conversation with nothing behind it: the benchmark sends its events itself. */
function stubBackend(): ChatBackend & { emit(event: ChatEvent): void } {
  const listeners = new Set<(event: ChatEvent) => void>();
  let n = 0;
  return {
    where: "embedded",
    chatName: "cli:bench",
    info: {
      commands: async () => [{ name: "help", description: "list the commands" }],
      status: async () => ({
        model: "fake-model",
        usage: { promptTokens: 1200, completionTokens: 300, cachedTokens: 0 },
        context: { usedTokens: 1500, windowTokens: 128_000 },
        turns: { running: 0, waiting: 0 },
        queue: { waiting: 0, active: 0, workers: 1 },
      }),
      sessions: async () => [],
      history: async () => [],
    },
    submit: () => `m${++n}`,
    onEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    emit(event) {
      for (const listener of listeners) listener(event);
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const plain = (text: string) => text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "");

/** A reply of `lines` lines: paragraphs, lists and code blocks. */
export function longReply(lines: number): string {
  const out: string[] = [];
  for (let i = 0; out.length < lines; i++) {
    if (i % 5 === 4) out.push("```ts", `const value${i} = compute(${i}); // step ${i}`, "```", "");
    else if (i % 5 === 3) out.push(`- item ${i}: a point worth making about step ${i}`, "");
    else out.push(`Paragraph ${i} says **something** about \`step ${i}\` in a line of ordinary length.`, "");
  }
  return out.slice(0, lines).join("\n");
}

/** The UI in this process on a stub conversation; keystrokes and the streamed reply. */
async function inProcess(options: TuiBenchOptions) {
  const stdin = Object.assign(new PassThrough(), {
    isTTY: true,
    setRawMode: () => stdin,
  }) as unknown as NodeJS.ReadStream & PassThrough;
  const stdout = new FakeTerminal();
  const backend = stubBackend();
  const frames: number[] = [];
  // As `herald chat` loads it: React's production build.
  process.env["NODE_ENV"] ??= "production";
  const { runTui } = await import("../adapters/cli/tui/index.js");
  const done = runTui(backend, {
    stdin,
    stdout: stdout as unknown as NodeJS.WriteStream,
    color: true,
    alternateScreen: false,
    onFrame: (ms) => frames.push(ms),
  });
  await loadHighlighting();
  await sleep(300);

  // Keystroke to echo: the frame that shows the input with the new character.
  const echo: number[] = [];
  const bytes: number[] = [];
  let typed = "";
  for (let i = 0; i < options.keystrokes; i++) {
    if (typed.length >= 60) {
      stdin.write("\x15"); // Ctrl+U
      typed = "";
      await sleep(50);
    }
    const ch = String.fromCharCode(97 + (i % 26));
    typed += ch;
    const from = stdout.writes.length;
    const t0 = performance.now();
    stdin.write(ch);
    for (let waited = 0; waited < 1000; waited++) {
      const hit = stdout.writes.slice(from).find((w) => plain(w.text).includes(`› ${typed}`));
      if (hit) {
        echo.push(hit.at - t0);
        bytes.push(stdout.writes.slice(from).reduce((n, w) => n + Buffer.byteLength(w.text), 0));
        break;
      }
      await new Promise((r) => setImmediate(r));
    }
    await sleep(50);
  }
  stdin.write("\x15");
  await sleep(50);

  // A long reply streamed at a fast model's pace; the pacing's own CPU (its timers) is measured alone
  // and taken off.
  const reply = longReply(options.replyLines);
  const pieces = reply.match(/[\s\S]{1,4}/g) ?? [];
  // Pieces arrive as a stream's reads do: every 25 ms, those due by then.
  const pace = async (each: (piece: string) => void) => {
    const cpu0 = process.cpuUsage();
    const started = performance.now();
    let next = 0;
    while (next < pieces.length) {
      const due = Math.min(pieces.length, Math.floor((performance.now() - started) / options.pieceMs) + 1);
      for (; next < due; next++) each(pieces[next]!);
      await sleep(25);
    }
    const cpu = process.cpuUsage(cpu0);
    return (cpu.user + cpu.system) / 1000;
  };
  const pacing = await pace(() => {});
  stdin.write("go\r");
  await sleep(100);
  frames.length = 0;
  const writesBefore = stdout.writes.length;
  const streamed = await pace((piece) => backend.emit({ type: "delta", id: "m1", text: piece }));
  const cpu0 = process.cpuUsage();
  backend.emit({ type: "reply", id: "m1", kind: "reply", text: reply });
  await sleep(100);
  const end = process.cpuUsage(cpu0);
  const streamCpuMs = streamed - pacing + (end.user + end.system) / 1000;
  // A frame is one write of content (Ink brackets it with synchronized-update marks).
  const streamFrames = stdout.writes.slice(writesBefore).filter((w) => w.text.length > 16).length;
  const layout = [...frames];

  const theme = createTheme(true);
  const whole: number[] = [];
  for (let i = 0; i < 11; i++) {
    const t0 = performance.now();
    renderMarkdown(reply, 78, { theme, highlight: createHighlighter(theme) });
    whole.push(performance.now() - t0);
  }
  stdin.write("\x04"); // Ctrl+D
  await done;
  return {
    echoP50Ms: round(median(echo)),
    echoP99Ms: round(percentile(echo, 99)),
    bytesPerEcho: Math.round(median(bytes)),
    streamDeltas: pieces.length,
    streamFrames,
    streamCpuMs: Math.round(streamCpuMs),
    frameLayoutP50Ms: round(median(layout)),
    frameLayoutP99Ms: round(percentile(layout, 99)),
    wholeReplyRenderMs: round(median(whole)),
  };
}

/** The built binary in tmux, embedded gateway and all: CPU and bytes written while nothing happens. */
async function idle(
  options: TuiBenchOptions,
): Promise<{ idleCpuPercent: number; idleCpuMs: number; idleBytes: number }> {
  const llm = await startFakeLlm({ keepRequests: false });
  const home = mkdtempSync(join(tmpdir(), "herald-bench-tui-"));
  const socket = `herald-bench-${process.pid}`;
  const tmux = (...args: string[]) => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });
  const out = join(home, "pane-output");
  try {
    const env = `HERALD_HOME=${home} OPENAI_BASE_URL=${llm.url} OPENAI_API_KEY=k HERALD_MODEL=fake-model TERM=tmux-256color LANG=C.UTF-8`;
    const cli = join(options.root, "dist", "app", "cli.js");
    tmux(
      "new-session",
      "-d",
      "-s",
      "tui",
      "-x",
      "80",
      "-y",
      "24",
      `exec env -u CI ${env} ${process.execPath} ${cli} chat`,
    );
    tmux("pipe-pane", "-o", "-t", "tui", `cat > ${out}`);
    for (let i = 0; i < 200 && !tmux("capture-pane", "-p", "-t", "tui").includes("● ready"); i++)
      await sleep(100);
    await sleep(3000);
    const pid = Number(tmux("display-message", "-p", "-t", "tui", "#{pane_pid}").trim());
    const bytes0 = statSync(out).size;
    const cpu0 = cpuSeconds(pid);
    await sleep(options.idleSeconds * 1000);
    const cpu = cpuSeconds(pid) - cpu0;
    const bytes = statSync(out).size - bytes0;
    return {
      idleCpuPercent: round((100 * cpu) / options.idleSeconds, 2),
      idleCpuMs: Math.round(cpu * 1000),
      idleBytes: bytes,
    };
  } finally {
    spawnSync("tmux", ["-L", socket, "kill-server"]);
    await llm.close();
    rmSync(home, { recursive: true, force: true });
  }
}

/** Runs the scenario. */
export async function benchTui(options: TuiBenchOptions): Promise<TuiBenchResult> {
  const inside = await inProcess(options);
  const still = await idle(options);
  return { ...inside, ...still };
}

export function tuiMarkdown(r: TuiBenchResult, o: TuiBenchOptions, command: string): string {
  return [
    "## Terminal UI (`herald chat`)",
    "",
    `Command: \`${command}\` — ${machineLine()}. Keystrokes and the streamed reply run the UI's own code (keys, model, layout, Ink) in the bench process on an 80 × 24 pseudo-terminal that records what is written; the idle figures are the built \`herald chat\`, embedded gateway included, in a tmux pane.`,
    "",
    "| figure | value | target |",
    "|---|---|---|",
    `| **keystroke → echo** (frame with the character written), ${o.keystrokes} keys 50 ms apart, p50 / p99 | **${r.echoP50Ms} / ${r.echoP99Ms} ms** | ≤ 16 ms |`,
    `| bytes written per echoed key (median; the whole frame, in one synchronized update) | ${r.bytesPerEcho} B |  |`,
    `| **idle CPU**, ${o.idleSeconds} s with nothing happening (UI and embedded gateway) | **${r.idleCpuPercent} %** (${r.idleCpuMs} ms of CPU; counted in 10 ms ticks) | ~0 % |`,
    `| bytes written to the terminal while idle | ${r.idleBytes} B | 0 |`,
    `| **${o.replyLines}-line reply streamed** in ${r.streamDeltas} pieces of 4 characters, one every ${o.pieceMs} ms read every 25 ms (${round((r.streamDeltas * o.pieceMs) / 1000, 1)} s): the UI's CPU for the whole reply | **${r.streamCpuMs} ms** (${round((100 * r.streamCpuMs) / (r.streamDeltas * o.pieceMs), 1)} % of a core; ${round(r.streamCpuMs / r.streamFrames, 2)} ms a frame) |  |`,
    `| frames written during it (at most one per 33 ms) | ${r.streamFrames} |  |`,
    `| layout per frame, p50 / p99 (the finished blocks kept, the last one rendered again) | ${r.frameLayoutP50Ms} / ${r.frameLayoutP99Ms} ms |  |`,
    `| for scale: rendering the whole reply once (done once more when it ends, for the exact final text) | ${r.wholeReplyRenderMs} ms |  |`,
    "",
    `The machine is shared: 1-minute load average ${loadavg()[0]!.toFixed(1)} at the end, so the p99 figures swing with what else runs.`,
    "",
    "Nothing redraws while nothing changes: no timer runs when no turn does (the spinner runs only during",
    "one). Ink writes a frame at most every 33 ms, the first at once, so a keystroke is echoed in the",
    "same tick while a fast stream costs a frame per 33 ms; a streaming reply's finished blocks keep their",
    "lines, so a frame near the end of a long reply lays out only its last block. Most of a streaming",
    "frame's CPU is Ink's own output pass (it measures and re-styles every character of the frame).",
  ].join("\n");
}
