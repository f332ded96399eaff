/**
 * The senses' costs, in this process: `web_extract` of a 2 MB article page (fetched from a local HTTP
 * server through the guarded fetch, HTML converted in the worker thread as the gateway does), and the
 * time Herald adds to transcribing a 10 s voice note over what the (fake) speech server itself took.
 */
import { mkdtempSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createVoice } from "../agent/tools/voice/index.js";
import { webTools } from "../agent/tools/web/declaration.js";
import { createWorkerHtmlConverter } from "../agent/tools/web/html-converter.js";
import type { ToolContext } from "../agent/types.js";
import { silentLogger } from "../core/logger.js";
import { ffprobe, makeVoiceNote, startFakeSpeech } from "../tests/fakes/speech/index.js";
import { longPage } from "../tests/fakes/web/pages.js";
import { machineLine, percentile, round } from "./lib.js";

export interface SensesBenchOptions {
  /** web_extract runs (after 3 warm-up runs). */
  extractRuns: number;
  /** Transcriptions (after 2 warm-up runs). */
  transcribeRuns: number;
}

export interface SensesBenchResult {
  pageBytes: number;
  markdownChars: number;
  extractP50Ms: number;
  extractP90Ms: number;
  /** Peak RSS during the runs minus RSS before the first page (worker thread and its libraries included). */
  extractPeakRssDeltaMb: number;
  noteDurationS: number;
  noteBytes: number;
  transcribeP50Ms: number;
  serverP50Ms: number;
  /** Per run: the client's time minus the server's own, then the p50 and p90 of that. */
  addedP50Ms: number;
  addedP90Ms: number;
}

/** A 2 MB page: paragraphs of the test article until it is that big. */
function twoMegabytePage(): string {
  for (let n = 4000; ; n += 500) {
    const page = longPage(n);
    if (Buffer.byteLength(page) >= 2 * 1024 * 1024) return page;
  }
}

function toolContext(): ToolContext {
  return {
    signal: new AbortController().signal,
    origin: {
      sessionId: "s",
      sessionKey: "bench",
      chat: { platform: "api", chatId: "b" },
      chatType: "dm",
      userId: "u",
    },
    state: { searchSessions: async () => [] },
    logger: silentLogger(),
    homeDir: tmpdir(),
    progress: () => undefined,
  };
}

async function benchExtract(
  runs: number,
): Promise<
  Pick<
    SensesBenchResult,
    "pageBytes" | "markdownChars" | "extractP50Ms" | "extractP90Ms" | "extractPeakRssDeltaMb"
  >
> {
  const page = Buffer.from(twoMegabytePage());
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "content-length": page.length });
    res.end(page);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/long`;
  const converter = createWorkerHtmlConverter();
  const tool = webTools({ allowPrivate: true, convertHtml: converter.convert }).find(
    (t) => t.name === "web_extract",
  )!;
  const ctx = toolContext();
  let markdownChars = 0;
  const once = async () => {
    const out = await tool.execute({ url, max_chars: 1_000_000 }, ctx);
    markdownChars = (typeof out === "string" ? out : out.content).length;
  };
  try {
    // From before the first page: the converter's thread and libraries load with it.
    const baseline = process.memoryUsage.rss();
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage.rss());
    }, 2);
    for (let i = 0; i < 3; i++) await once();
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      await once();
      times.push(performance.now() - started);
    }
    clearInterval(sampler);
    return {
      pageBytes: page.length,
      markdownChars,
      extractP50Ms: round(percentile(times, 50), 1),
      extractP90Ms: round(percentile(times, 90), 1),
      extractPeakRssDeltaMb: round((peak - baseline) / 1024 / 1024, 1),
    };
  } finally {
    await converter.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

async function benchTranscribe(
  runs: number,
): Promise<
  Omit<
    SensesBenchResult,
    "pageBytes" | "markdownChars" | "extractP50Ms" | "extractP90Ms" | "extractPeakRssDeltaMb"
  >
> {
  const speech = await startFakeSpeech();
  try {
    const dir = mkdtempSync(join(tmpdir(), "herald-bench-voice-"));
    const text =
      "Good morning. Please book a table for four people at the Italian place near the station, tomorrow at eight, and tell Bob the meeting moved to Thursday afternoon. Also remind me to call the plumber.";
    const note = await makeVoiceNote(dir, text);
    const probe = await ffprobe(note);
    const { size } = await import("node:fs/promises").then((fs) => fs.stat(note));
    const voice = createVoice({ stt: { baseUrl: speech.baseUrl, model: "whisper-1" } });
    const transcribe = voice.transcribe!;
    for (let i = 0; i < 2; i++) await transcribe(note);
    const totals: number[] = [];
    const servers: number[] = [];
    const added: number[] = [];
    for (let i = 0; i < runs; i++) {
      const before = speech.log.length;
      const started = performance.now();
      await transcribe(note);
      const total = performance.now() - started;
      const server = speech.log.slice(before).reduce((sum, l) => sum + l.serverMs, 0);
      totals.push(total);
      servers.push(server);
      added.push(total - server);
    }
    return {
      noteDurationS: round(probe.durationS, 1),
      noteBytes: size,
      transcribeP50Ms: round(percentile(totals, 50), 1),
      serverP50Ms: round(percentile(servers, 50), 1),
      addedP50Ms: round(percentile(added, 50), 1),
      addedP90Ms: round(percentile(added, 90), 1),
    };
  } finally {
    await speech.close();
  }
}

/** Runs both measurements. */
export async function benchSenses(options: SensesBenchOptions): Promise<SensesBenchResult> {
  const extract = await benchExtract(options.extractRuns);
  const stt = await benchTranscribe(options.transcribeRuns);
  return { ...extract, ...stt };
}

/** The BENCHMARKS.md section. */
export function sensesMarkdown(r: SensesBenchResult, options: SensesBenchOptions, command: string): string {
  return `## Senses: web_extract of a 2 MB page, voice-note transcription overhead

\`${command}\` · ${machineLine()}

In one process (no gateway): the \`web_extract\` tool as the gateway builds it (guarded fetch, HTML to
Markdown in the worker thread), and \`transcribe\` of \`voice/\` against the fake speech server.
Load average (1 min) when it finished: ${loadavg()[0]?.toFixed(1)} on ${cpus().length} cores; figures from a busy
host are upper bounds.

| what | figure |
|---|---|
| web_extract, ${(r.pageBytes / 1024 / 1024).toFixed(2)} MB article page → ${r.markdownChars.toLocaleString("en")} chars of Markdown, p50 / p90 (${options.extractRuns} runs) | ${r.extractP50Ms} / ${r.extractP90Ms} ms |
| web_extract, peak RSS growth from before the first page (the worker thread and its libraries included) | ${r.extractPeakRssDeltaMb} MB |
| transcription of a ${r.noteDurationS} s Ogg/Opus voice note (${Math.round(r.noteBytes / 1024)} kB), p50 (${options.transcribeRuns} runs) | ${r.transcribeP50Ms} ms |
| of which the speech server's own time (receiving the upload, ffprobe, answer), p50 | ${r.serverP50Ms} ms |
| **Herald's added time** (client total − server time, per run), p50 / p90 | **${r.addedP50Ms} / ${r.addedP90Ms} ms** (the issue's budget: 20 ms) |
`;
}
