/**
 * The model step's live checks: the endpoint lists its models with the key, and the chosen model answers
 * one token. Every failure is a `CheckFailed` whose message says what was wrong and how to fix it; the
 * key never appears in a message. Each platform's and feature's own checks live beside its declaration.
 */
import { CheckFailed } from "../../core/setup.js";
import { callService, trimUrl } from "../../core/setup-steps.js";

/** The model endpoint: lists its models with the key (a real, authenticated request). */
export async function checkModel(baseUrl: string, apiKey: string | undefined): Promise<{ models: string[] }> {
  const headers: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
  const answer = await callService("the model endpoint", `${trimUrl(baseUrl)}/models`, { headers });
  if (answer.status === 401 || answer.status === 403) {
    throw new CheckFailed(
      `The model endpoint answered ${answer.status}: the API key was refused. Check the key (and that it belongs to this provider).`,
    );
  }
  if (answer.status === 404) return { models: [] }; // some servers have no /models; the model is asked for by name
  if (answer.status >= 400) {
    throw new CheckFailed(
      `The model endpoint answered ${answer.status} to GET /models. Check the base URL (it usually ends in /v1).`,
    );
  }
  const data = Array.isArray(answer.body["data"]) ? (answer.body["data"] as { id?: unknown }[]) : [];
  return {
    models: data
      .map((m) => String(m.id ?? ""))
      .filter(Boolean)
      .sort(),
  };
}

/**
 * The models an Ollama server has installed (`GET /api/tags` at the server's root, `base_url` without
 * its `/v1`), newest first as Ollama lists them. @throws CheckFailed when it lists none (with the fix)
 */
export async function checkOllamaModels(baseUrl: string): Promise<{ models: string[] }> {
  const root = trimUrl(baseUrl).replace(/\/v1$/, "");
  const answer = await callService("Ollama", `${root}/api/tags`);
  if (answer.status >= 400) {
    throw new CheckFailed(
      `Ollama answered ${answer.status} to GET /api/tags. Check that Ollama runs (\`ollama serve\`) at ${root} and that the base URL is its /v1.`,
    );
  }
  const list = Array.isArray(answer.body["models"]) ? (answer.body["models"] as { name?: unknown }[]) : [];
  const models = list.map((m) => String(m.name ?? "")).filter(Boolean);
  if (!models.length) {
    throw new CheckFailed(
      "Ollama has no model installed. Fix: pull one (`ollama pull qwen3:8b`), then run setup again.",
    );
  }
  return { models };
}

/** One chat completion of one token: the model answers under this name. */
export async function checkModelAnswers(
  baseUrl: string,
  apiKey: string | undefined,
  model: string,
): Promise<void> {
  const answer = await callService("the model endpoint", `${trimUrl(baseUrl)}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "ping" }], max_tokens: 1 }),
    timeoutMs: 60_000,
  });
  if (answer.status === 401 || answer.status === 403) {
    throw new CheckFailed(
      `The model endpoint answered ${answer.status} to a chat request: the API key was refused. Check the key (and that it belongs to this provider).`,
    );
  }
  if (answer.status >= 400) {
    const message = (answer.body["error"] as { message?: string } | undefined)?.message ?? "";
    throw new CheckFailed(
      `The model '${model}' did not answer (HTTP ${answer.status}${message ? `: ${message}` : ""}). Check the model name.`,
    );
  }
}
