/**
 * A fake OpenAI-compatible embeddings endpoint (`POST /v1/embeddings`) on 127.0.0.1 whose vectors mean
 * something a test can reason about: each text is embedded by keyword buckets, so words of one topic
 * ("trip", "flights", "booked", "hotel" …) land on the same dimensions whatever the wording, and other
 * words spread thinly over the rest. "what did we decide about the trip?" is near "flights booked for
 * the 12th" and far from "the pasta recipe needs more salt". Answers floats, or base64 when asked (the
 * openai SDK's default). Failures and hangs are scripted; every request is recorded.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** Topics and their words: the first dimensions of every vector, two per topic. */
export const TOPICS: Readonly<Record<string, readonly string[]>> = {
  trip: [
    "trip",
    "travel",
    "flight",
    "flights",
    "booked",
    "booking",
    "hotel",
    "vacation",
    "holiday",
    "airport",
    "journey",
    "fly",
  ],
  food: ["dinner", "lunch", "recipe", "cook", "cooking", "restaurant", "pasta", "salt", "eat", "meal"],
  work: ["meeting", "deadline", "report", "project", "office", "colleague", "budget"],
  health: ["doctor", "appointment", "medicine", "dentist", "sick", "headache"],
  garden: ["garden", "tomatoes", "plants", "water", "seeds", "soil"],
  music: ["song", "guitar", "concert", "piano", "music", "band"],
};

/** One request as the fake saw it. */
export interface EmbeddingsRequest {
  path: string;
  authorization: string | undefined;
  model: string;
  input: string[];
  encodingFormat: string | undefined;
  dimensions: number | undefined;
}

export interface FakeEmbeddings {
  /** `http://127.0.0.1:<port>/v1` */
  url: string;
  requests: EmbeddingsRequest[];
  /** Texts embedded so far (successful requests only), in order. */
  embeddedTexts(): string[];
  /** The next `count` requests answer `status` (500: an outage; 400: the input refused). */
  failNext(count: number, status?: number): void;
  /** Requests hang (never answered) until `release()`. */
  hang(): void;
  /** After `count` more answered requests, requests hang. */
  hangAfter(count: number): void;
  /** Requests held unanswered now. */
  held(): number;
  release(): void;
  /** Requests whose input contains `word` answer 400 (a message the endpoint refuses). */
  refuseTextsWith(word: string | undefined): void;
  close(): Promise<void>;
}

/** The fake's vector of `text` at `dimensions` (≥ 16), not normalised. */
export function bucketVector(text: string, dimensions: number): number[] {
  const v = new Array<number>(dimensions).fill(-0.05);
  const topics = Object.values(TOPICS);
  const spread = dimensions - topics.length * 2;
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const topic = topics.findIndex((words) => words.includes(word));
    if (topic >= 0) {
      v[topic * 2] = (v[topic * 2] ?? 0) + 1;
      v[topic * 2 + 1] = (v[topic * 2 + 1] ?? 0) + 1;
      continue;
    }
    let h = 2166136261;
    for (const c of word) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
    const at = topics.length * 2 + (h % spread);
    v[at] = (v[at] ?? 0) + 0.15;
  }
  return v;
}

async function body(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString("utf8");
}

function send(res: ServerResponse, status: number, value: unknown): void {
  const data = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(data) });
  res.end(data);
}

/**
 * Starts the fake; vectors are `dimensions` long unless a request asks for `dimensions`. With `apiKey`,
 * a request without that bearer key gets 401.
 */
export async function startFakeEmbeddings(
  options: { dimensions?: number; apiKey?: string } = {},
): Promise<FakeEmbeddings> {
  const defaultDimensions = options.dimensions ?? 64;
  const requests: EmbeddingsRequest[] = [];
  const embedded: string[] = [];
  let failures: { count: number; status: number } = { count: 0, status: 500 };
  let refuseWord: string | undefined;
  let hanging = false;
  let answersLeft = Number.POSITIVE_INFINITY;
  const held: ServerResponse[] = [];
  const server = createServer(async (req, res) => {
    const raw = await body(req);
    if (req.method !== "POST" || req.url !== "/v1/embeddings")
      return send(res, 404, { error: { message: "not found" } });
    const parsed = JSON.parse(raw) as {
      model: string;
      input: string | string[];
      encoding_format?: string;
      dimensions?: number;
    };
    const input = typeof parsed.input === "string" ? [parsed.input] : parsed.input;
    requests.push({
      path: req.url,
      authorization: req.headers.authorization,
      model: parsed.model,
      input,
      encodingFormat: parsed.encoding_format,
      dimensions: parsed.dimensions,
    });
    if (answersLeft <= 0) hanging = true;
    if (options.apiKey && req.headers.authorization !== `Bearer ${options.apiKey}`)
      return send(res, 401, {
        error: { message: "Incorrect API key provided", type: "invalid_request_error" },
      });
    if (hanging) {
      held.push(res);
      return;
    }
    if (failures.count > 0) {
      failures.count--;
      return send(res, failures.status, {
        error: { message: `scripted failure ${failures.status}`, type: "server_error" },
      });
    }
    if (refuseWord && input.some((t) => t.includes(refuseWord!)))
      return send(res, 400, { error: { message: "input refused", type: "invalid_request_error" } });
    const dims = parsed.dimensions ?? defaultDimensions;
    const data = input.map((text, index) => {
      const vector = bucketVector(text, dims);
      const embedding =
        parsed.encoding_format === "base64"
          ? Buffer.from(Float32Array.from(vector).buffer).toString("base64")
          : vector;
      return { object: "embedding", index, embedding };
    });
    embedded.push(...input);
    answersLeft--;
    send(res, 200, {
      object: "list",
      data,
      model: parsed.model,
      usage: { prompt_tokens: input.length, total_tokens: input.length },
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    embeddedTexts: () => [...embedded],
    failNext(count, status = 500) {
      failures = { count, status };
    },
    hang() {
      hanging = true;
    },
    hangAfter(count) {
      answersLeft = count;
    },
    held: () => held.length,
    release() {
      hanging = false;
      answersLeft = Number.POSITIVE_INFINITY;
      for (const res of held.splice(0)) res.destroy();
    },
    refuseTextsWith(word) {
      refuseWord = word;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held.splice(0)) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
