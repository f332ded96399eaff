/**
 * The `embeddings:` settings of recall by meaning: an OpenAI-compatible `/embeddings` endpoint whose
 * vectors make `session_search` find earlier messages that say the same thing in other words. Absent,
 * `session_search` finds by keywords only (FTS5) and `herald doctor` says what to set.
 */
import { z } from "zod";
import { ConfigError, describeError } from "../../../core/errors.js";
import { type DoctorLine, defineFeature } from "../../../core/settings.js";
import type { EmbeddingsEndpoint } from "./embeddings-client.js";

/** The `embeddings` section as written. */
export const embeddingsSectionSchema = z
  .strictObject({
    baseUrl: z.url({ protocol: /^https?$/ }),
    model: z.string().min(1),
    dimensions: z.number().int().min(8).max(8192),
    /** Send `dimensions` in the request (models that shorten their vectors: OpenAI's text-embedding-3). */
    requestDimensions: z.boolean().default(false),
    /** The environment variable holding the endpoint's key. */
    apiKeyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
      .optional(),
    batchSize: z.number().int().min(1).max(2048).default(64),
    minSimilarity: z.number().min(-1).max(1).default(0.3),
    timeoutMs: z.number().int().positive().default(30_000),
    /** Platforms whose turns get earlier conversations prefetched when a message refers to the past. */
    prefetch: z.array(z.string().min(1)).default([]),
    prefetchChars: z.number().int().min(200).max(8000).default(1200),
  })
  .optional();

/** The parsed `embeddings` section. */
export type EmbeddingsSection = z.output<typeof embeddingsSectionSchema>;

/** The section as the process uses it: the key read from its variable. */
export type EmbeddingsConfig = (NonNullable<EmbeddingsSection> & EmbeddingsEndpoint) | undefined;

/** Reads the key from the variable `api_key_env` names. @throws ConfigError when that variable is unset */
function resolveEmbeddings(
  section: EmbeddingsSection,
  env: Readonly<Record<string, string | undefined>>,
): EmbeddingsConfig {
  if (!section) return undefined;
  const name = section.apiKeyEnv;
  const apiKey = name ? env[name]?.trim() : undefined;
  if (name && !apiKey)
    throw new ConfigError(
      name,
      `embeddings.api_key_env names ${name}, which is not set. Fix: add ${name}=<key> to HERALD_HOME/.env or the environment, or remove api_key_env for an endpoint that needs no key.`,
    );
  return { ...section, apiKey };
}

/**
 * `herald doctor`'s line: keywords only without an endpoint (with what to set), else one embedding of
 * a word, checked for its length.
 */
export async function checkEmbeddings(config: EmbeddingsConfig): Promise<DoctorLine> {
  if (!config)
    return {
      ok: true,
      text: "session_search: keywords only (no embeddings endpoint, so no recall by meaning)",
      fix: "set HERALD_EMBEDDINGS_URL, HERALD_EMBEDDINGS_MODEL and HERALD_EMBEDDINGS_DIMENSIONS (embeddings: in config.yaml)",
    };
  const where = `${config.model} at ${config.baseUrl}`;
  try {
    // The client (and the OpenAI SDK) loads for the check only: the config reads this file at every start.
    const { createEmbeddingsClient } = await import("./embeddings-client.js");
    const [vector] = await createEmbeddingsClient({ ...config, timeoutMs: 10_000 }).embed(["herald"]);
    return {
      ok: true,
      text: `session_search: keywords and meaning (${where}, ${vector?.length} dimensions)`,
    };
  } catch (err) {
    return {
      ok: false,
      text: `session_search: the embeddings endpoint failed (${where}): ${describeError(err)}`,
      fix: "check embeddings.base_url, model, dimensions and the key in the variable api_key_env names; until then session_search finds by keywords only",
    };
  }
}

/** Recall by meaning. */
export const embeddingsSettings = defineFeature({
  key: "embeddings",
  schema: embeddingsSectionSchema,
  env: {
    HERALD_EMBEDDINGS_URL: ["base_url", "url"],
    HERALD_EMBEDDINGS_MODEL: ["model", "string"],
    HERALD_EMBEDDINGS_DIMENSIONS: ["dimensions", "int"],
    HERALD_EMBEDDINGS_KEY_ENV: ["api_key_env", "string"],
    HERALD_RECALL_PREFETCH: ["prefetch", "list"],
  },
  reference: {
    intro:
      "Recall by meaning: after each turn the gateway embeds its messages in the background (batched, retried, resumed after a restart) and `session_search` fuses keyword and meaning matches. Without this section it finds by keywords only. A new `model` or `dimensions` embeds every message again.",
    rows: [
      [
        "base_url",
        "an OpenAI-compatible `/v1` with `/embeddings` (OpenAI, Ollama, vLLM, llama.cpp …)",
        "none (keywords only)",
      ],
      ["model", "the embedding model, e.g. `text-embedding-3-small`, `nomic-embed-text`"],
      ["dimensions", "the length of its vectors (e.g. `1536`, `768`; shorter with `request_dimensions`)"],
      [
        "request_dimensions",
        "send `dimensions` in each request, for models that shorten their vectors (text-embedding-3)",
      ],
      ["api_key_env", "the variable holding the endpoint's key", "none (no key)"],
      ["batch_size", "messages per request"],
      ["min_similarity", "cosine similarity under which a meaning match is left out"],
      ["timeout_ms", "one request may take this long"],
      [
        "prefetch",
        'platforms (or `all`) where a message that refers to the past ("what did we decide…", "remember…") gets the closest earlier messages by meaning as a note before the model\'s first call: one embedding and one search on the turn\'s path',
        "none (off)",
      ],
      ["prefetch_chars", "the note's budget in characters"],
    ],
  },
  resolve: (section: EmbeddingsSection, { env }) => resolveEmbeddings(section, env),
  doctor: async (config) => [await checkEmbeddings(config)],
});
