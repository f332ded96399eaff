/**
 * The model step of `herald setup`: provider, base URL, key (checked by listing models: Ollama's
 * installed ones from its `/api/tags`), model name. Anthropic, Gemini and Bedrock, spoken natively,
 * have their own step (vendors.ts).
 */
import type { Choice, StepContext } from "../../core/setup.js";
import { checked, secret, tryAgain } from "../../core/setup-steps.js";
import { checkModel, checkModelAnswers, checkOllamaModels } from "./checks.js";
import { chooseModel } from "./choose-model.js";
import { VENDORS, type VendorName, vendorStep } from "./vendors.js";

type Provider = "openai" | "openrouter" | "ollama" | VendorName | "other" | "skip";

const PRESETS: Record<Exclude<Provider, VendorName | "other" | "skip">, string> = {
  openai: "https://api.openai.com/v1",
  openrouter: "https://openrouter.ai/api/v1",
  ollama: "http://127.0.0.1:11434/v1",
};

const vendor = (name: VendorName): Choice<Provider> => ({
  value: name,
  label: VENDORS[name].label,
  hint: `its own API (api: ${VENDORS[name].api})`,
});

const CHOICES: Choice<Provider>[] = [
  { value: "openai", label: "OpenAI", hint: PRESETS.openai },
  vendor("anthropic"),
  vendor("gemini"),
  { value: "openrouter", label: "OpenRouter", hint: PRESETS.openrouter },
  vendor("bedrock"),
  { value: "ollama", label: "Ollama on this machine", hint: PRESETS.ollama },
  { value: "other", label: "Another OpenAI-compatible endpoint", hint: "vLLM, llama.cpp, LM Studio, Groq…" },
  { value: "skip", label: "Skip (keep the current model settings)" },
];

const isVendor = (p: Provider): p is VendorName => p in VENDORS;

/** Asks for the model endpoint until it answers (or the user skips); records it in the files. */
export async function modelStep(ctx: StepContext): Promise<void> {
  const { p, files } = ctx;
  const currentUrl = (files.get("model.base_url") as string | undefined) ?? undefined;
  const known = Object.entries(PRESETS).find(([, url]) => url === currentUrl)?.[0] as Provider | undefined;
  const provider = await p.select({
    key: "model.provider",
    message: "Which model provider?",
    options: CHOICES,
    initial: known ?? (currentUrl ? "other" : "openai"),
  });
  if (provider === "skip") return;
  if (isVendor(provider)) return vendorStep(ctx, provider);
  for (;;) {
    const preset = provider === "other" ? undefined : PRESETS[provider];
    const baseUrl =
      provider === "other"
        ? await p.text({
            key: "model.url",
            message: "Base URL of the OpenAI-compatible API (usually ends in /v1)",
            initial: currentUrl,
            placeholder: "http://127.0.0.1:8000/v1",
          })
        : await p.text({ key: "model.url", message: "Base URL", initial: preset, advanced: true });
    if (!baseUrl) return;
    const key =
      provider === "ollama"
        ? { value: ctx.files.env("OPENAI_API_KEY"), isNew: false }
        : await secret(ctx, "model.key", "OPENAI_API_KEY", "API key (Enter keeps the current one)");
    const listed = await checked(
      ctx,
      `Asking ${baseUrl} for its models`,
      () => (provider === "ollama" ? checkOllamaModels(baseUrl) : checkModel(baseUrl, key.value)),
      (r) =>
        r.models.length ? `The endpoint answered: ${r.models.length} model(s)` : "The endpoint answered",
    );
    if (!listed) {
      if (await tryAgain(ctx, "model settings")) continue;
      return;
    }
    const current = files.get("model.name") as string | undefined;
    const name = await chooseModel(ctx, listed.models, current);
    if (!name) return;
    // Listing models proves little on some providers (OpenRouter lists them to anyone): one token from
    // the chosen model proves the key, the name and the endpoint together.
    const answered = await checked(
      ctx,
      `Asking ${name} for one token`,
      () => checkModelAnswers(baseUrl, key.value, name).then(() => true),
      () => `${name} answered`,
    );
    if (!answered) {
      if (await tryAgain(ctx, "model settings")) continue;
      return;
    }
    files.set("model.base_url", baseUrl);
    files.set("model.name", name);
    if (key.isNew && key.value) files.setEnv("OPENAI_API_KEY", key.value);
    return;
  }
}
