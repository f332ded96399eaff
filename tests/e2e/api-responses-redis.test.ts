/**
 * `/v1/responses` across processes: real `herald gateway` and `herald worker` on a private Redis, the
 * `openai` SDK as the client. The client's tools travel in the job to the worker, the step with the
 * client's calls comes back in the result, and the client's outputs carry the turn on in the worker.
 */
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeLlm, startFakeLlm } from "../fakes/llm/index.js";
import { HeraldCluster } from "../helpers/herald-cluster.js";
import { redisPerFile } from "../helpers/redis.js";

const redis = redisPerFile();
let llm: FakeLlm | undefined;
let cluster: HeraldCluster | undefined;

afterEach(async () => {
  await cluster?.stop();
  await llm?.close();
  cluster = undefined;
  llm = undefined;
});

describe("/v1/responses on Redis workers", () => {
  it("round-trips a client function call through a worker, streamed", async () => {
    llm = await startFakeLlm();
    cluster = new HeraldCluster({ redisUrl: redis.url, llmUrl: llm.url });
    await cluster.startGateway();
    await cluster.startWorker();
    const client = new OpenAI({ baseURL: `${cluster.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const tool = { type: "function" as const, name: "pick_color", parameters: null, strict: false };

    llm.script({ toolCalls: [{ id: "call_c1", name: "pick_color", arguments: {} }] });
    const first = await client.responses.create({ input: "Pick a color for me.", tools: [tool] });
    expect(first.output).toEqual([
      expect.objectContaining({ type: "function_call", call_id: "call_c1", name: "pick_color" }),
    ]);

    llm.script({ text: "Teal it is, as your picker said." });
    const stream = client.responses.stream({
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: "call_c1", output: "teal" }],
      tools: [tool],
    });
    const final = await stream.finalResponse();
    expect(final.output_text).toBe("Teal it is, as your picker said.");
    const seen = llm.requests.at(-1)!.messages;
    expect(seen.find((m) => m.role === "tool" && m.tool_call_id === "call_c1")?.content).toBe("teal");
    expect(seen.some((m) => m.content === "Pick a color for me.")).toBe(true);
  });
});
