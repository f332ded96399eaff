/**
 * Usage and the session's model across processes: real `herald gateway` and `herald worker` on a private
 * Redis. The worker's tokens reach the gateway in the turn's result (`/usage`, the API's `usage`), and a
 * `/model` switch made at the gateway travels in the job to the worker's next request.
 */
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

async function post(c: HeraldCluster, text: string, sessionId?: string) {
  const res = await fetch(`${c.url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(sessionId ? { "x-herald-session-id": sessionId } : {}),
    },
    body: JSON.stringify({ model: "herald", messages: [{ role: "user", content: text }] }),
  });
  const body = (await res.json()) as {
    choices: { message: { content: string } }[];
    usage: { prompt_tokens: number; completion_tokens: number };
  };
  return {
    text: body.choices[0]!.message.content,
    usage: body.usage,
    sessionId: res.headers.get("x-herald-session-id")!,
  };
}

describe("providers on Redis workers", () => {
  it("records the worker's tokens at the gateway and sends the session's /model choice to the worker", async () => {
    llm = await startFakeLlm();
    cluster = new HeraldCluster({ redisUrl: redis.url, llmUrl: llm.url });
    const c = cluster;
    await c.startGateway();
    await c.startWorker();

    const first = await post(c, "hello from afar");
    expect(first.text).toBe("echo: hello from afar");
    expect(first.usage.prompt_tokens).toBe(llm.usages[0]!.prompt_tokens);
    expect(first.usage.completion_tokens).toBe(llm.usages[0]!.completion_tokens);

    // The env-only setup: the one endpoint serves any model name.
    expect((await post(c, "/model bigger-model", first.sessionId)).text).toBe(
      "Switched this session to bigger-model.",
    );
    await post(c, "and again", first.sessionId);
    expect(llm.requests.map((r) => r.model)).toEqual(["fake-model", "bigger-model"]);

    const usage = (await post(c, "/usage", first.sessionId)).text;
    const sum = (k: "prompt_tokens" | "completion_tokens") => llm!.usages.reduce((n, u) => n + u[k], 0);
    expect(usage).toContain("• fake-model:");
    expect(usage).toContain("• bigger-model:");
    const cached = llm.usages.reduce((n, u) => n + (u.prompt_tokens_details?.cached_tokens ?? 0), 0);
    const total = `Total: ${sum("prompt_tokens").toLocaleString("en-US")} in (${cached.toLocaleString("en-US")} cached), ${sum("completion_tokens").toLocaleString("en-US")} out`;
    expect(usage).toContain(total);
    expect(await c.metrics()).toContain(
      `herald_tokens_total{kind="prompt",model="bigger-model"} ${llm.usages[1]!.prompt_tokens}\n`,
    );
  });
});
