/**
 * `/v1/responses` against `/v1/chat/completions`, the same turn: the gateway as a child process (as
 * `npm start` runs it) with the fake model answering at once in 8 stream pieces, driven by the official
 * `openai` SDK. Figures per protocol: time to the first text event and to the end of the stream,
 * unstreamed total, and the gateway's CPU per turn. The protocols take blocks of turns in turn, so the
 * machine's noise weighs on both; every turn starts a new conversation (a new session).
 */
import { loadavg } from "node:os";
import OpenAI from "openai";
import { startFakeLlm } from "../tests/fakes/llm/index.js";
import { cpuSeconds, machineLine, median, percentile, round, spawnGateway, startFlags } from "./lib.js";

export interface ResponsesBenchOptions {
  root: string;
  /** Turns per protocol and mode. */
  turns: number;
}

interface Series {
  first: number[];
  total: number[];
  plain: number[];
  cpuMs: number;
  cpuTurns: number;
}

export interface ResponsesBenchResult {
  protocol: "chat.completions" | "responses";
  firstP50Ms: number;
  firstP95Ms: number;
  totalP50Ms: number;
  totalP95Ms: number;
  plainP50Ms: number;
  plainP95Ms: number;
  gatewayCpuMsPerTurn: number;
}

const ANSWER =
  "Herald answers this question in a few short sentences, written piece by piece as a model would.";

type Protocol = ResponsesBenchResult["protocol"];

/** One streamed turn: ms to the first text and to the end. */
async function streamed(client: OpenAI, protocol: Protocol, text: string): Promise<[number, number]> {
  const t0 = performance.now();
  let first = 0;
  let got = "";
  if (protocol === "responses") {
    const stream = await client.responses.create({ model: "herald", input: text, stream: true });
    for await (const event of stream) {
      if (event.type !== "response.output_text.delta") continue;
      if (!first) first = performance.now() - t0;
      got += event.delta;
    }
  } else {
    const stream = await client.chat.completions.create({
      model: "herald",
      stream: true,
      messages: [{ role: "user", content: text }],
    });
    for await (const chunk of stream) {
      const piece = chunk.choices[0]?.delta.content;
      if (!piece) continue;
      if (!first) first = performance.now() - t0;
      got += piece;
    }
  }
  if (got !== ANSWER) throw new Error(`${protocol}: the streamed text differs from the model's`);
  return [first, performance.now() - t0];
}

async function plain(client: OpenAI, protocol: Protocol, text: string): Promise<number> {
  const t0 = performance.now();
  const got =
    protocol === "responses"
      ? (await client.responses.create({ model: "herald", input: text })).output_text
      : (
          await client.chat.completions.create({
            model: "herald",
            messages: [{ role: "user", content: text }],
          })
        ).choices[0]?.message.content;
  if (got !== ANSWER) throw new Error(`${protocol}: the text differs from the model's`);
  return performance.now() - t0;
}

export async function benchResponses(options: ResponsesBenchOptions): Promise<ResponsesBenchResult[]> {
  const llm = await startFakeLlm({ keepRequests: false });
  llm.setDefault(() => ({ text: ANSWER, pieces: 8 }));
  const env = { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "bench", HERALD_MODEL: "fake-model" };
  const gw = await spawnGateway(env, options.root, startFlags(options.root));
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: "unused", maxRetries: 0 });
  const protocols: Protocol[] = ["chat.completions", "responses"];
  const series = new Map<Protocol, Series>(
    protocols.map((p) => [p, { first: [], total: [], plain: [], cpuMs: 0, cpuTurns: 0 }]),
  );
  try {
    for (const p of protocols) for (let i = 0; i < 30; i++) await streamed(client, p, `warm ${i}`);
    const block = 20;
    for (let done = 0; done < options.turns; done += block) {
      const order = (done / block) % 2 === 0 ? protocols : [...protocols].reverse();
      for (const p of order) {
        const s = series.get(p)!;
        const pid = gw.child.pid!;
        const cpu0 = cpuSeconds(pid);
        for (let i = done; i < Math.min(done + block, options.turns); i++) {
          const [first, total] = await streamed(client, p, `turn ${i}`);
          s.first.push(first);
          s.total.push(total);
          s.plain.push(await plain(client, p, `plain ${i}`));
          s.cpuTurns += 2;
        }
        s.cpuMs += (cpuSeconds(pid) - cpu0) * 1000;
      }
    }
  } finally {
    await gw.stop();
    await llm.close();
  }
  return protocols.map((protocol) => {
    const s = series.get(protocol)!;
    return {
      protocol,
      firstP50Ms: round(median(s.first)),
      firstP95Ms: round(percentile(s.first, 95)),
      totalP50Ms: round(median(s.total)),
      totalP95Ms: round(percentile(s.total, 95)),
      plainP50Ms: round(median(s.plain)),
      plainP95Ms: round(percentile(s.plain, 95)),
      gatewayCpuMsPerTurn: round(s.cpuMs / s.cpuTurns),
    };
  });
}

export function responsesMarkdown(
  results: ResponsesBenchResult[],
  options: ResponsesBenchOptions,
  command: string,
): string {
  const [chat, resp] = results;
  if (!chat || !resp) throw new Error("the responses scenario needs both protocols' figures");
  const ratio = (a: number, b: number) => `${round(b / a)}×`;
  const row = (name: string, pick: (r: ResponsesBenchResult) => [number, number]) => {
    const [c50, c95] = pick(chat);
    const [r50, r95] = pick(resp);
    return `| ${name} | ${c50} / ${c95} ms | ${r50} / ${r95} ms | ${ratio(c50, r50)} |`;
  };
  return [
    "## `/v1/responses` against `/v1/chat/completions`, the same turn",
    "",
    `Command: \`${command}\` — ${machineLine()}. The gateway runs as its own process with npm start's flags; the`,
    "bench process runs the official `openai` SDK as the client and the fake model, which answers at once in",
    `8 stream pieces. ${options.turns} turns per protocol and mode, each a new conversation; the protocols take`,
    "blocks of 20 turns in alternating order.",
    "",
    "| figure (p50 / p95) | chat.completions | responses | ratio (p50) |",
    "|---|---|---|---|",
    row("streamed: first text event", (r) => [r.firstP50Ms, r.firstP95Ms]),
    row("streamed: total (to `[DONE]` / `response.completed`)", (r) => [r.totalP50Ms, r.totalP95Ms]),
    row("not streamed: total", (r) => [r.plainP50Ms, r.plainP95Ms]),
    `| gateway CPU per turn (both modes) | ${chat.gatewayCpuMsPerTurn} ms | ${resp.gatewayCpuMsPerTurn} ms | ${ratio(chat.gatewayCpuMsPerTurn, resp.gatewayCpuMsPerTurn)} |`,
    "",
    "A response is stored (`store` defaults to true) before it is answered: one more SQLite write per turn,",
    "and a few more events per stream (the opening and closing events around the text deltas).",
    `The machine's load average (1 min) at the end of the run was ${round(loadavg()[0] ?? 0, 1)} on its 2 cores:`,
    "other work shared them, so read the ratios rather than the absolute times.",
  ].join("\n");
}
