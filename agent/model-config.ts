/**
 * Whether a model is configured at all: the one check the gateway's start warning, `herald doctor` and
 * the model client share, so a fresh install fails at once with what to set instead of after retries.
 */

/** The endpoint the config defaults to when `OPENAI_BASE_URL` is not set. */
export const DEFAULT_MODEL_BASE_URL = "https://api.openai.com/v1";

/** Hosts of hosted APIs that always need a key (a local server such as Ollama may need none). */
const KEYED_HOSTS = ["api.openai.com", "openrouter.ai", "api.groq.com", "api.together.xyz", "api.mistral.ai"];

/**
 * What is missing for the model to work, phrased for the operator, or undefined when the model looks
 * configured (an endpoint that needs no key, or a key). Never throws.
 */
export function modelConfigProblem(model: {
  baseUrl: string;
  apiKey?: string | undefined;
}): string | undefined {
  if (model.apiKey) return undefined;
  let host = "";
  try {
    host = new URL(model.baseUrl).hostname;
  } catch {
    return `OPENAI_BASE_URL '${model.baseUrl}' is not a URL. Fix: set OPENAI_BASE_URL (e.g. http://127.0.0.1:11434/v1 for Ollama) or run \`herald setup\`.`;
  }
  if (model.baseUrl.replace(/\/+$/, "") === DEFAULT_MODEL_BASE_URL) {
    return "No model is configured: OPENAI_API_KEY is not set (and OPENAI_BASE_URL is OpenAI's default). Fix: run `herald setup`, or set OPENAI_API_KEY (and OPENAI_BASE_URL, HERALD_MODEL for another provider).";
  }
  if (KEYED_HOSTS.some((h) => host === h || host.endsWith(`.${h}`))) {
    return `OPENAI_API_KEY is not set but ${host} needs a key. Fix: set OPENAI_API_KEY or run \`herald setup\`.`;
  }
  return undefined;
}
