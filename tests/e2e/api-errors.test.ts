/**
 * The API server's error statuses that need their own gateway: a model that times out (504), and a
 * fresh install with no model configured (503 at once, saying what to set).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { createApiAdapter } from "../../adapters/api/index.js";
import { loadConfig } from "../../app/config.js";
import { startGateway } from "../../app/gateway-main.js";
import { createLogger, silentLogger } from "../../core/logger.js";
import type { InboundMessage } from "../../core/types.js";
import { chat, type Harness, startHarness } from "../helpers/gateway-harness.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

describe("API server errors", () => {
  it("answers 504 when the model does not answer in time", async () => {
    harness = await startHarness({ configYaml: "model:\n  timeout_ms: 200\n  max_retries: 0\n" });
    harness.llm.script({ text: "too late", delayMs: 3000 });
    const reply = await chat(harness, "hi");
    expect(reply.status).toBe(504);
    expect(reply.body).toMatchObject({
      error: {
        type: "server_error",
        code: "model_timeout",
        message: expect.stringMatching(/did not answer within 0.2 s/),
      },
    });
  });

  it("answers at once with 503 and what to set when no model is configured", async () => {
    // A clean install: no OPENAI_BASE_URL (OpenAI's default) and no OPENAI_API_KEY.
    harness = await startHarness({ env: { OPENAI_BASE_URL: "", OPENAI_API_KEY: "" } });
    const client = new OpenAI({
      baseURL: `${harness.apiUrl}/v1`,
      apiKey: "unused",
      maxRetries: 0,
      timeout: 3000,
    });
    const err = (await client.chat.completions
      .create({ model: "herald", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    // Not a client timeout (3 s): the gateway answered without trying to reach a model.
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect(err.status).toBe(503);
    expect(err.code).toBe("model_not_configured");
    expect(err.message).toMatch(/No model is configured.*herald setup.*OPENAI_API_KEY/);
    expect(err.headers?.get("x-should-retry")).toBe("false");
    expect(harness.llm.requests).toHaveLength(0);
  });

  it("warns once at start when no model is configured", async () => {
    const home = mkdtempSync(join(tmpdir(), "herald-nomodel-"));
    let logged = "";
    const destination = {
      write: (line: string) => {
        logged += line;
      },
    };
    const gateway = await startGateway(loadConfig({ env: { HERALD_HOME: home, API_SERVER_PORT: "0" } }), {
      logger: createLogger({ level: "info", destination }),
    });
    await gateway.stop();
    rmSync(home, { recursive: true, force: true });
    const warnings = logged
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { level: number; msg: string; problem?: string })
      .filter((l) => l.level === 40 && /model/.test(l.msg));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.problem).toMatch(/OPENAI_API_KEY is not set.*herald setup/);
  });
});

describe("a long streamed turn", () => {
  it("opens the stream before the first text, keeps it alive, and ends it with an error event", async () => {
    const adapter = createApiAdapter({ modelName: "m", streamKeepAliveMs: 100 }, { logger: silentLogger() });
    const received: InboundMessage[] = [];
    await adapter.start(async (m) => {
      received.push(m);
      return "accepted";
    });
    const server = createServer((req, res) => void adapter.handleHttp(req, res, req.url ?? "/"));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    try {
      const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "k", maxRetries: 0 });
      // The turn runs long (tools, say): no text for a while, yet the client has its stream.
      const stream = await client.chat.completions.create({
        model: "herald",
        stream: true,
        messages: [{ role: "user", content: "a long job" }],
      });
      const inbound = received[0]!;
      await new Promise((r) => setTimeout(r, 350));
      void adapter.send(inbound.chat, {
        text: "The model endpoint is not answering (503) after 4 tries; try again in a minute.",
        kind: "error",
        failure: { code: "model_unavailable" },
        replyToId: inbound.messageId,
        idempotencyKey: "e1",
      });
      let text = "";
      const err = await (async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
      })().catch((e: unknown) => e);
      expect(text).toBe("");
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect((err as Error).message).toMatch(/not answering \(503\)/);
    } finally {
      await adapter.stop();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
