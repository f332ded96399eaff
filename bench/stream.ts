/**
 * Streamed replies scenario: the whole gateway in-process with the real Telegram adapter (its send
 * budget on, as a real bot has it) long-polling the fake Bot API, and the fake model writing each answer
 * slowly, piece by piece. Figures: first visible text (the model's first token → the preview message
 * arriving at the Bot API), edits per reply, and the final text's lag after the model's last token.
 * Once with one chat at a time, once with many chats streaming at once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTelegramAdapter } from "../adapters/telegram/index.js";
import { loadConfig } from "../app/config.js";
import { startGateway } from "../app/gateway-main.js";
import { silentLogger } from "../core/logger.js";
import { startFakeLlm } from "../tests/fakes/llm/index.js";
import { startFakeTelegram } from "../tests/fakes/telegram/index.js";
import { machineLine, median, percentile, round } from "./lib.js";

export interface StreamBenchOptions {
  /** Chats streaming at once. */
  chats: number;
  turnsPerChat: number;
  /** Stream pieces per answer and the model's pause between them. */
  pieces: number;
  pieceDelayMs: number;
  /** Pause between a chat's turns (reading the answer). */
  pauseMs: number;
}

export interface StreamBenchResult {
  firstTextP50Ms: number;
  firstTextP95Ms: number;
  editsPerReplyMedian: number;
  editsPerReplyMax: number;
  finalLagP50Ms: number;
  finalLagP95Ms: number;
  /** Replies whose visible text ended different from the model's answer (must be 0). */
  wrongFinal: number;
}

const ANSWER = `Here is **the plan**:\n\n${Array.from(
  { length: 8 },
  (_, i) => `${i + 1}. Step ${i + 1}: do the thing properly, then check it.`,
).join("\n")}\n\n\`\`\`sh\nnpm run check\n\`\`\`\n\nThat is all.`;
/** What Telegram shows of ANSWER (its HTML parsed back to text). */
const VISIBLE_END = "That is all.";

/** Runs the scenario; every turn is real (ledger, session, journal, queue, agent, outbox, Bot API calls). */
export async function benchStream(opts: StreamBenchOptions): Promise<StreamBenchResult> {
  const llm = await startFakeLlm({ keepRequests: false });
  const firstToken = new Map<string, number>();
  llm.setDefault((request) => {
    const last = request.messages.filter((m) => m.role === "user").at(-1);
    // The first piece is written right after this handler returns (the fake sends role and first piece together).
    firstToken.set(String(last?.content ?? ""), Date.now());
    return { text: ANSWER, pieces: opts.pieces, chunkDelayMs: opts.pieceDelayMs };
  });
  const fake = await startFakeTelegram();
  const homeDir = mkdtempSync(join(tmpdir(), "herald-bench-stream-"));
  const config = loadConfig({
    env: {
      HERALD_HOME: homeDir,
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "bench",
      HERALD_MODEL: "fake-model",
      API_SERVER_ENABLED: "false",
      GATEWAY_ALLOW_ALL_USERS: "true",
    },
  });
  const kv = new Map<string, string>();
  const adapter = createTelegramAdapter(
    { botToken: fake.token, apiRoot: fake.url, stream: "edit" },
    {
      logger: silentLogger(),
      homeDir,
      cacheDir: join(homeDir, "cache"),
      kv: { get: (k) => kv.get(k), set: (k, v) => void kv.set(k, v), delete: (k) => void kv.delete(k) },
    },
  );
  const gateway = await startGateway(config, { logger: silentLogger(), extraAdapters: [adapter] });
  const firstText: number[] = [];
  const edits: number[] = [];
  const finalLag: number[] = [];
  let wrongFinal = 0;
  const streamMs = (opts.pieces - 1) * opts.pieceDelayMs;
  try {
    let reference: string | undefined;
    const turn = async (chatId: number, i: number, record: boolean): Promise<void> => {
      const text = `turn ${chatId}-${i}`;
      const before = fake.calls.length;
      const shownBefore = fake.botMessages(chatId).length;
      fake.userSends({ chatId, fromId: chatId, text });
      // Done when this turn's message shows the whole answer and the model has finished writing it.
      await fake.waitFor(() => {
        const shown = fake.botMessages(chatId)[shownBefore]?.text ?? "";
        const started = firstToken.get(text);
        return shown.endsWith(VISIBLE_END) && started !== undefined && Date.now() >= started + streamMs;
      }, 120_000);
      await gateway.runner.outbox.idle();
      const mine = fake.botMessages(chatId).slice(shownBefore);
      if (!record) {
        reference = mine[0]?.text;
        return;
      }
      const started = firstToken.get(text)!;
      const calls = fake.calls
        .slice(before)
        .filter(
          (c) =>
            String(c.params["chat_id"]) === String(chatId) &&
            (c.method === "sendMessage" || c.method === "editMessageText") &&
            c.status === 200,
        );
      const first = calls.find((c) => c.method === "sendMessage");
      const last = calls.at(-1);
      if (!first || !last) throw new Error("no reply recorded");
      firstText.push(first.at - started);
      edits.push(calls.filter((c) => c.method === "editMessageText").length);
      finalLag.push(Math.max(0, last.at - (started + streamMs)));
      if (mine.length !== 1 || mine[0]!.text !== reference) wrongFinal++;
    };
    await turn(9_000_000, 0, false); // warm-up, and the reference text of a finished reply
    await Promise.all(
      Array.from({ length: opts.chats }, async (_, c) => {
        for (let i = 0; i < opts.turnsPerChat; i++) {
          // A person reads the answer before writing again.
          if (i > 0) await new Promise((r) => setTimeout(r, opts.pauseMs));
          await turn(1_000_000 + c, i, true);
        }
      }),
    );
    return {
      firstTextP50Ms: round(median(firstText)),
      firstTextP95Ms: round(percentile(firstText, 95)),
      editsPerReplyMedian: median(edits),
      editsPerReplyMax: Math.max(...edits),
      finalLagP50Ms: round(median(finalLag)),
      finalLagP95Ms: round(percentile(finalLag, 95)),
      wrongFinal,
    };
  } finally {
    await gateway.stop();
    await adapter.stop();
    await fake.close();
    await llm.close();
    rmSync(homeDir, { recursive: true, force: true });
  }
}

/** The BENCHMARKS.md section: one chat at a time, and many chats streaming at once. */
export function streamMarkdown(
  single: StreamBenchResult,
  many: StreamBenchResult,
  opts: { single: StreamBenchOptions; many: StreamBenchOptions },
  command: string,
): string {
  const row = (r: StreamBenchResult) =>
    [
      `**${r.firstTextP50Ms}** / ${r.firstTextP95Ms} ms`,
      `${r.editsPerReplyMedian} (max ${r.editsPerReplyMax})`,
      `${r.finalLagP50Ms} / ${r.finalLagP95Ms} ms`,
      String(r.wrongFinal),
    ].join(" | ");
  const { pieces, pieceDelayMs } = opts.single;
  return `## Streamed replies through the fake Telegram Bot API

Command: \`${command}\` — ${machineLine()}. Gateway in-process, the real Telegram adapter (Telegram's send
limits on: ~1 call/s per chat, burst 3) polling a fake Bot API on 127.0.0.1; the fake model writes each
answer (${ANSWER.length} characters of Markdown with a list and a code block) in ${pieces} pieces ${pieceDelayMs} ms
apart (${((pieces - 1) * pieceDelayMs) / 1000} s). First visible text: the model's first token → the preview's
sendMessage arriving at the Bot API (it includes the 150 ms the preview waits for more than a word). Final
lag: the model's last token → the last call of the reply (the final edit) arriving there. A chat's
turns are ${opts.single.pauseMs / 1000} s apart (the user reads the answer): back to back, the next reply's first text
waits for the chat's budget (Telegram allows ~1 message a second per chat), about a second.

| chats streaming at once × turns each | first visible text p50 / p95 (target ≤ 300 ms p50) | edits per reply median | final lag p50 / p95 | replies not ending exact |
|---|---|---|---|---|
| ${opts.single.chats} × ${opts.single.turnsPerChat} | ${row(single)} |
| ${opts.many.chats} × ${opts.many.turnsPerChat} | ${row(many)} |

Edits follow the chat's budget (at most one a second in a private chat, the burst kept for the final
text): a ${((pieces - 1) * pieceDelayMs) / 1000} s answer got ${single.editsPerReplyMedian} edits alone and ${many.editsPerReplyMedian} (max ${many.editsPerReplyMax}) with ${opts.many.chats} chats
sharing the bot-wide 30 calls/s. An edit without a free slot is skipped, never queued, so the final
text does not wait behind previews (the 429 tests in \`tests/e2e/telegram-stream.test.ts\` and
\`slack-stream.test.ts\` show fewer edits and the exact final text when the platform says wait).`;
}
