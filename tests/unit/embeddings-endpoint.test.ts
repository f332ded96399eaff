/**
 * The embeddings endpoint as a user meets it: the fake speaks what the openai SDK's `embeddings.create`
 * expects (floats, and base64 by default), and `herald doctor` says whether session_search finds by
 * meaning, what to set when it does not, and the fix when the endpoint fails.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { createEmbeddingsClient } from "../../agent/tools/session-search/index.js";
import { loadConfig } from "../../app/config.js";
import { printDoctor, runDoctor } from "../../app/doctor.js";
import { type FakeEmbeddings, startFakeEmbeddings } from "../fakes/embeddings/index.js";
import { type FakeLlm, startFakeLlm } from "../fakes/llm/index.js";

let fake: FakeEmbeddings | undefined;
let llm: FakeLlm | undefined;
let home: string | undefined;
afterEach(async () => {
  await fake?.close();
  await llm?.close();
  if (home) rmSync(home, { recursive: true, force: true });
  fake = llm = home = undefined;
});

const cosine = (a: number[], b: number[]) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  a.forEach((x, i) => {
    dot += x * (b[i] ?? 0);
    na += x * x;
    nb += (b[i] ?? 0) ** 2;
  });
  return dot / Math.sqrt(na * nb);
};

async function doctor(env: Record<string, string>): Promise<{ out: string; code: number }> {
  llm = await startFakeLlm();
  home = mkdtempSync(join(tmpdir(), "herald-embed-doctor-"));
  let out = "";
  const sink = {
    write: (s: string) => {
      out += s;
      return true;
    },
  } as unknown as NodeJS.WritableStream;
  const lines = await runDoctor({
    HERALD_HOME: home,
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: "k",
    HERALD_MODEL: "fake-model",
    ...env,
  });
  return { code: printDoctor(lines, sink), out };
}

describe("the fake embeddings endpoint", () => {
  it("answers the openai SDK in base64 (its default) and in floats, near by topic", async () => {
    fake = await startFakeEmbeddings({ apiKey: "sk-embed" });
    const sdk = new OpenAI({ baseURL: fake.url, apiKey: "sk-embed", maxRetries: 0 });
    const texts = [
      "what did we decide about the trip?",
      "flights booked for the 12th",
      "the pasta recipe needs salt",
    ];
    const base64 = await sdk.embeddings.create({ model: "fake-embed", input: texts });
    const floats = await sdk.embeddings.create({
      model: "fake-embed",
      input: texts,
      encoding_format: "float",
    });
    expect(fake.requests.map((r) => r.encodingFormat)).toEqual(["base64", "float"]);
    const [query, flights, pasta] = floats.data.map((d) => d.embedding);
    expect(base64.data.map((d) => d.embedding.length)).toEqual([64, 64, 64]);
    for (const [i, d] of base64.data.entries()) {
      for (const [k, x] of d.embedding.entries()) expect(x).toBeCloseTo(floats.data[i]!.embedding[k]!, 5);
    }
    expect(cosine(query!, flights!)).toBeGreaterThan(0.5);
    expect(cosine(query!, pasta!)).toBeLessThan(0.3);
    await expect(
      new OpenAI({ baseURL: fake.url, apiKey: "wrong", maxRetries: 0 }).embeddings.create({
        model: "m",
        input: "x",
      }),
    ).rejects.toThrow(/401/);
  });

  it("gives Herald's client unit vectors, and names the fix for the wrong dimensions", async () => {
    fake = await startFakeEmbeddings();
    const client = createEmbeddingsClient({ baseUrl: fake.url, model: "m", dimensions: 64 });
    const [v] = await client.embed(["flights"]);
    expect(v!.reduce((s, x) => s + x * x, 0)).toBeCloseTo(1, 5);
    const wrong = createEmbeddingsClient({ baseUrl: fake.url, model: "m", dimensions: 32 });
    await expect(wrong.embed(["x"])).rejects.toThrow(
      /64 dimensions, not 32\. Fix: set embeddings\.dimensions to 64/,
    );
    const shortened = createEmbeddingsClient({
      baseUrl: fake.url,
      model: "m",
      dimensions: 32,
      requestDimensions: true,
    });
    expect((await shortened.embed(["x"]))[0]).toHaveLength(32);
    expect(fake.requests.at(-1)?.dimensions).toBe(32);
  });
});

describe("herald doctor on recall by meaning", () => {
  it("says session_search finds by keywords only, and what to set, without an endpoint", async () => {
    const { out, code } = await doctor({});
    expect(code).toBe(0);
    expect(out).toContain("session_search: keywords only (no embeddings endpoint, so no recall by meaning)");
    expect(out).toContain("HERALD_EMBEDDINGS_URL, HERALD_EMBEDDINGS_MODEL and HERALD_EMBEDDINGS_DIMENSIONS");
  });

  it("embeds one word against the endpoint, with the key from the variable named", async () => {
    fake = await startFakeEmbeddings({ apiKey: "sk-embed" });
    const env = {
      HERALD_EMBEDDINGS_URL: fake.url,
      HERALD_EMBEDDINGS_MODEL: "fake-embed",
      HERALD_EMBEDDINGS_DIMENSIONS: "64",
      HERALD_EMBEDDINGS_KEY_ENV: "EMBED_KEY",
    };
    const ok = await doctor({ ...env, EMBED_KEY: "sk-embed" });
    expect(ok.out).toContain(
      `session_search: keywords and meaning (fake-embed at ${fake.url}, 64 dimensions)`,
    );
    await llm?.close();
    const refused = await doctor({ ...env, EMBED_KEY: "sk-wrong" });
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/✗ session_search: the embeddings endpoint failed .*refused the key \(401\)/);
    expect(refused.out).not.toContain("sk-wrong");
  });

  it("refuses to start when api_key_env names a variable that is not set", () => {
    expect(() =>
      loadConfig({
        env: {
          HERALD_HOME: "/nonexistent",
          HERALD_EMBEDDINGS_URL: "http://127.0.0.1:1/v1",
          HERALD_EMBEDDINGS_MODEL: "m",
          HERALD_EMBEDDINGS_DIMENSIONS: "64",
          HERALD_EMBEDDINGS_KEY_ENV: "EMBED_KEY",
        },
      }),
    ).toThrow(/embeddings\.api_key_env names EMBED_KEY, which is not set\. Fix: add EMBED_KEY=<key>/);
  });
});
