/**
 * `session_search`: search over the caller's own past conversations, by keywords (FTS5) and, with an
 * `embeddings:` endpoint, by meaning (`gateway.ts`). Scoped to the same user on the same platform, the
 * current session left out; a chat never sees another user's sessions.
 */
export { sessionSearchTool } from "./declaration.js";
export { BackgroundEmbedder, type EmbedderOptions, type EmbedderState } from "./embedder.js";
export {
  createEmbeddingsClient,
  type EmbeddingsClient,
  type EmbeddingsEndpoint,
} from "./embeddings-client.js";
export {
  createRecall,
  fuseByRank,
  type Recall,
  type RecallGateway,
  recallPrefetch,
  refersToPast,
} from "./gateway.js";
export { type EmbeddingsConfig, embeddingsSettings } from "./settings.js";
