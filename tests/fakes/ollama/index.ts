/**
 * A fake Ollama server on 127.0.0.1: `GET /api/tags` lists the installed models (Ollama's shape:
 * `name`, `model`, `modified_at`, `size`, `digest`, `details`), `GET /v1/models` the same in OpenAI's
 * shape, and `POST /v1/chat/completions` answers (non-streamed) for an installed model, else 404
 * `model "x" not found, try pulling it first` as Ollama does.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeOllama {
  /** The OpenAI-compatible base URL (`…/v1`), as a provider's `base_url`. */
  readonly url: string;
  /** Paths requested, in order. */
  readonly paths: string[];
  close(): Promise<void>;
}

export async function startFakeOllama(installed: string[]): Promise<FakeOllama> {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (p: Buffer) => parts.push(p));
    req.on("end", () => {
      const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
      paths.push(`${req.method} ${path}`);
      const send = (status: number, body: object) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      if (req.method === "GET" && path === "/api/tags") {
        const models = installed.map((name, i) => ({
          name,
          model: name,
          modified_at: new Date(Date.UTC(2026, 10, 28 - i)).toISOString(),
          size: 5_000_000_000,
          digest: `sha256:${String(i).repeat(64).slice(0, 64)}`,
          details: { format: "gguf", family: "qwen3", parameter_size: "8.2B", quantization_level: "Q4_K_M" },
        }));
        send(200, { models });
      } else if (req.method === "GET" && path === "/v1/models") {
        send(200, {
          object: "list",
          data: installed.map((id) => ({ id, object: "model", owned_by: "library" })),
        });
      } else if (req.method === "POST" && path === "/v1/chat/completions") {
        const model = (JSON.parse(Buffer.concat(parts).toString() || "{}") as { model?: string }).model ?? "";
        if (!installed.includes(model)) {
          send(404, {
            error: { message: `model "${model}" not found, try pulling it first`, type: "api_error" },
          });
          return;
        }
        send(200, {
          id: "chatcmpl-1",
          object: "chat.completion",
          created: 0,
          model,
          choices: [{ index: 0, message: { role: "assistant", content: "p" }, finish_reason: "length" }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        });
      } else send(404, { error: "not found" });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    paths,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
