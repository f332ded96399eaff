/**
 * A worker thread serving the instant fakes of the transports benchmark (OpenAI chat completions,
 * OpenAI Responses, Anthropic, Gemini, Bedrock), so their CPU is not the measured thread's. Posts their base URLs.
 */
import { parentPort } from "node:worker_threads";
import { startFakeAnthropic } from "../tests/fakes/anthropic/index.js";
import { startFakeBedrock } from "../tests/fakes/bedrock/index.js";
import { startFakeGemini } from "../tests/fakes/gemini/index.js";
import { startFakeLlm } from "../tests/fakes/llm/index.js";
import { startFakeResponses } from "../tests/fakes/openai-responses/index.js";

/** The answer every request gets: a paragraph of a usual length, in a few pieces. */
export const BENCH_ANSWER =
  "A paragraph of a usual length for a chat reply, with a few clauses in it. ".repeat(6);

const chat = await startFakeLlm({ keepRequests: false });
chat.setDefault(() => ({ text: BENCH_ANSWER, pieces: 6 }));
const anthropic = await startFakeAnthropic({ apiKey: "bench", keep: false });
anthropic.setDefault(() => ({ text: BENCH_ANSWER, pieces: 6 }));
const responses = await startFakeResponses({ apiKey: "bench", keep: false });
responses.setDefault(() => ({ text: BENCH_ANSWER, pieces: 6 }));
const gemini = await startFakeGemini({ apiKey: "bench", keep: false });
gemini.setDefault(() => ({ text: BENCH_ANSWER, pieces: 6 }));
const bedrock = await startFakeBedrock({ accessKeyId: "AKIDBENCH", keep: false });
bedrock.setDefault(() => ({ text: BENCH_ANSWER, pieces: 6 }));
parentPort?.postMessage({
  bedrock: bedrock.url,
  chat: chat.url,
  anthropic: anthropic.url,
  responses: responses.url,
  gemini: gemini.url,
});
parentPort?.on("message", async (message: unknown) => {
  if (message !== "close") return;
  await chat.close();
  await anthropic.close();
  await responses.close();
  await gemini.close();
  await bedrock.close();
  process.exit(0);
});
