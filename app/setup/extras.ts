/** The optional steps of `herald setup`: web search, speech to text, where commands run. */
import { checked, type StepContext, secret } from "./step.js";
import type { Choice } from "./types.js";

export type ExtraName = "web" | "speech" | "exec";

export const EXTRA_CHOICES: Choice<ExtraName>[] = [
  { value: "web", label: "Web search", hint: "SearXNG, Brave or Tavily" },
  { value: "speech", label: "Voice notes to text", hint: "an OpenAI-compatible transcription endpoint" },
  { value: "exec", label: "Where the agent's commands run", hint: "sandbox (bubblewrap), local, docker" },
];

/** Runs the chosen optional steps. */
export async function extraSteps(ctx: StepContext, chosen: ExtraName[]): Promise<void> {
  if (chosen.includes("web")) await webStep(ctx);
  if (chosen.includes("speech")) await speechStep(ctx);
  if (chosen.includes("exec")) await execStep(ctx);
}

async function webStep(ctx: StepContext): Promise<void> {
  const { p, files } = ctx;
  const provider = await p.select({
    key: "web.provider",
    message: "Search provider",
    options: [
      { value: "searxng", label: "SearXNG", hint: "self-hosted, no key" },
      { value: "brave", label: "Brave Search API", hint: "needs a key" },
      { value: "tavily", label: "Tavily", hint: "needs a key" },
      { value: "skip", label: "Skip" },
    ],
    initial: (files.get("web.search.provider") as "searxng" | "brave" | "tavily" | undefined) ?? "searxng",
  });
  if (provider === "skip") return;
  files.set("web.search.provider", provider);
  if (provider === "searxng") {
    const url = await p.text({
      key: "web.url",
      message: "SearXNG base URL",
      initial: files.get("web.search.base_url") as string | undefined,
      placeholder: "http://127.0.0.1:8888",
    });
    if (url) files.set("web.search.base_url", url);
    return;
  }
  const key = await secret(ctx, "web.key", "HERALD_WEB_SEARCH_KEY", `${provider} API key`);
  if (key.isNew && key.value) files.setEnv("HERALD_WEB_SEARCH_KEY", key.value);
}

async function speechStep(ctx: StepContext): Promise<void> {
  const { p, files } = ctx;
  const url = await p.text({
    key: "speech.url",
    message: "Transcription endpoint base URL (OpenAI-compatible /v1; empty skips)",
    initial: files.get("voice.stt.base_url") as string | undefined,
    placeholder: "https://api.groq.com/openai/v1",
  });
  if (!url) return;
  const model = await p.text({
    key: "speech.model",
    message: "Transcription model",
    initial: (files.get("voice.stt.model") as string | undefined) ?? "whisper-1",
  });
  const key = await secret(ctx, "speech.key", "HERALD_STT_KEY", "Its API key (empty for none)");
  const reachable = await checked(
    ctx,
    `Checking ${url}`,
    async () => {
      const res = await fetch(`${url.replace(/\/+$/, "")}/models`, {
        headers: key.value ? { authorization: `Bearer ${key.value}` } : {},
        signal: AbortSignal.timeout(15_000),
      }).catch(() => undefined);
      return res ? res.status : 0;
    },
    (status) =>
      status === 0
        ? "not reachable (saved anyway)"
        : status === 401 || status === 403
          ? `answered ${status}: check the key`
          : "reachable",
  );
  if (reachable === 0) p.say("warn", "The endpoint did not answer; `herald doctor` checks it again.");
  files.set("voice.stt.base_url", url);
  if (model) files.set("voice.stt.model", model);
  if (key.isNew && key.value) files.setEnv("HERALD_STT_KEY", key.value);
}

async function execStep(ctx: StepContext): Promise<void> {
  const backend = await ctx.p.select({
    key: "exec.backend",
    message: "Where do the agent's shell commands run?",
    options: [
      { value: "sandbox", label: "Sandbox (bubblewrap)", hint: "default; apt-get install bubblewrap" },
      { value: "docker", label: "Docker container" },
      {
        value: "local",
        label: "This host, unsandboxed",
        hint: "only for a machine you would give the agent",
      },
      { value: "skip", label: "Skip" },
    ],
    initial: (ctx.files.get("exec.backend") as "sandbox" | "docker" | "local" | undefined) ?? "sandbox",
  });
  if (backend !== "skip") ctx.files.set("exec.backend", backend);
}
