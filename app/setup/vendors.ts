/**
 * The model step for the vendors Herald speaks natively (Anthropic, Gemini, Bedrock): the key (or,
 * for Bedrock, the AWS credentials of the environment) checked live by listing the vendor's models and
 * asking the chosen one for a token, then written as a `providers:` entry with its `api:` and
 * `model.default` pointing at it. The key goes to HERALD_HOME/.env under the vendor's usual name.
 */
import { CheckFailed, type StepContext } from "../../core/setup.js";
import { callService, checked, secret, trimUrl, tryAgain } from "../../core/setup-steps.js";
import { chooseModel } from "./choose-model.js";

/** A vendor the model step offers beside the OpenAI-compatible presets. */
export interface Vendor {
  readonly api: "anthropic" | "gemini" | "bedrock";
  readonly label: string;
  /** The endpoint when `base_url` is left out (Bedrock: the region's). */
  readonly baseUrl: string;
  /** Where the key is kept; Bedrock reads the AWS chain instead. */
  readonly keyEnv?: string;
  /** The vendor's models the key can use. @throws CheckFailed */
  list(baseUrl: string, key: string | undefined): Promise<string[]>;
  /** One token from `model`. @throws CheckFailed */
  answer(baseUrl: string, key: string | undefined, model: string): Promise<void>;
}

export const VENDORS = {
  anthropic: {
    api: "anthropic",
    label: "Anthropic (Claude)",
    baseUrl: "https://api.anthropic.com",
    keyEnv: "ANTHROPIC_API_KEY",
    list: listAnthropic,
    answer: answerAnthropic,
  },
  gemini: {
    api: "gemini",
    label: "Google Gemini",
    baseUrl: "https://generativelanguage.googleapis.com",
    keyEnv: "GEMINI_API_KEY",
    list: listGemini,
    answer: answerGemini,
  },
  bedrock: {
    api: "bedrock",
    label: "Amazon Bedrock",
    baseUrl: "",
    list: async () => [],
    answer: answerBedrock,
  },
} as const satisfies Record<string, Vendor>;

export type VendorName = keyof typeof VENDORS;

/** Asks for a vendor's key and model until both answer (or the user gives up); records them. */
export async function vendorStep(ctx: StepContext, name: VendorName): Promise<void> {
  const vendor: Vendor = VENDORS[name];
  const { p, files } = ctx;
  const entry = providerEntries(ctx).find((e) => e["name"] === name);
  for (;;) {
    const baseUrl = await vendorUrl(ctx, vendor, entry);
    if (baseUrl === undefined) return;
    const key = vendor.keyEnv
      ? await secret(ctx, "model.key", vendor.keyEnv, `${vendor.label} API key (Enter keeps the current one)`)
      : { value: undefined, isNew: false };
    if (vendor.keyEnv && !key.value) {
      if (!p.interactive) throw new CheckFailed(`No key: give --model-key or set ${vendor.keyEnv}.`);
      continue;
    }
    const listed = await checked(
      ctx,
      `Asking ${vendor.label} for its models`,
      () => vendor.list(baseUrl, key.value),
      (models) =>
        models.length ? `${vendor.label} answered: ${models.length} model(s)` : `${vendor.label} answered`,
    );
    if (!listed) {
      if (await tryAgain(ctx, "model settings")) continue;
      return;
    }
    const current = (entry?.["models"] as { name?: string }[] | undefined)?.[0]?.name;
    const model = await chooseModel(ctx, listed, current);
    if (!model) {
      if (!p.interactive) throw new CheckFailed(`No model: give --model (a ${vendor.label} model id).`);
      return;
    }
    const answered = await checked(
      ctx,
      `Asking ${model} for one token`,
      () => vendor.answer(baseUrl, key.value, model).then(() => true),
      () => `${model} answered`,
    );
    if (!answered) {
      if (await tryAgain(ctx, "model settings")) continue;
      return;
    }
    writeProvider(ctx, vendor, name, baseUrl, model);
    files.set("model.default", `${name}/${model}`);
    if (key.isNew && key.value && vendor.keyEnv) files.setEnv(vendor.keyEnv, key.value);
    return;
  }
}

/** The vendor's endpoint: an advanced question (a proxy, a gateway); Bedrock's is its region's. */
async function vendorUrl(
  ctx: StepContext,
  vendor: Vendor,
  entry: Record<string, unknown> | undefined,
): Promise<string | undefined> {
  const current = (entry?.["base_url"] as string | undefined) ?? vendor.baseUrl;
  if (vendor.api !== "bedrock") {
    return (
      (await ctx.p.text({ key: "model.url", message: "Base URL", initial: current, advanced: true })) ??
      current
    );
  }
  const region =
    (await ctx.p.text({
      key: "model.region",
      message: "AWS region of Bedrock",
      initial: process.env["AWS_REGION"] ?? "us-east-1",
    })) ?? process.env["AWS_REGION"];
  if (!region) return undefined;
  const given = await ctx.p.text({
    key: "model.url",
    message: "Endpoint",
    initial: entry?.["base_url"] as string,
    advanced: true,
  });
  return given ?? `https://bedrock-runtime.${region}.amazonaws.com`;
}

function providerEntries(ctx: StepContext): Record<string, unknown>[] {
  const list = ctx.files.get("providers");
  return Array.isArray(list) ? (list as Record<string, unknown>[]) : [];
}

/** Replaces (or adds) the vendor's entry in `providers:`, keeping the others and its other models. */
function writeProvider(ctx: StepContext, vendor: Vendor, name: string, baseUrl: string, model: string): void {
  const entries = providerEntries(ctx);
  const old = entries.find((e) => e["name"] === name);
  const otherModels = ((old?.["models"] as { name?: string }[] | undefined) ?? []).filter(
    (m) => m.name !== model,
  );
  const entry: Record<string, unknown> = { name, api: vendor.api };
  // Bedrock's endpoint names its region, so it is always kept; the others only when not the vendor's.
  if (vendor.api === "bedrock" || baseUrl !== vendor.baseUrl) entry["base_url"] = baseUrl;
  if (vendor.keyEnv) entry["api_key_env"] = vendor.keyEnv;
  const kept = (old?.["models"] as { name?: string }[] | undefined)?.find((m) => m.name === model);
  entry["models"] = [{ ...kept, name: model }, ...otherModels]; // the chosen model first, its settings kept
  ctx.files.set("providers", old ? entries.map((e) => (e === old ? entry : e)) : [...entries, entry]);
}

const refused = (vendor: string, status: number, env: string) =>
  new CheckFailed(
    `${vendor} answered ${status}: the API key was refused. Check the key (${env}) and that it belongs to this account.`,
  );

async function listAnthropic(baseUrl: string, key: string | undefined): Promise<string[]> {
  const answer = await callService("Anthropic", `${trimUrl(baseUrl)}/v1/models?limit=100`, {
    headers: { "x-api-key": key ?? "", "anthropic-version": "2023-06-01" },
  });
  if (answer.status === 401 || answer.status === 403)
    throw refused("Anthropic", answer.status, "ANTHROPIC_API_KEY");
  if (answer.status >= 400) {
    throw new CheckFailed(`Anthropic answered ${answer.status} to GET /v1/models. Check the base URL.`);
  }
  const data = Array.isArray(answer.body["data"]) ? (answer.body["data"] as { id?: unknown }[]) : [];
  return data.map((m) => String(m.id ?? "")).filter(Boolean);
}

async function answerAnthropic(baseUrl: string, key: string | undefined, model: string): Promise<void> {
  const answer = await callService("Anthropic", `${trimUrl(baseUrl)}/v1/messages`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": key ?? "",
      "anthropic-version": "2023-06-01",
    },
    body: JSON.stringify({ model, max_tokens: 1, messages: [{ role: "user", content: "ping" }] }),
    timeoutMs: 60_000,
  });
  if (answer.status === 401 || answer.status === 403)
    throw refused("Anthropic", answer.status, "ANTHROPIC_API_KEY");
  if (answer.status >= 400) throw notAnswered(model, answer.status, answer.body);
}

async function listGemini(baseUrl: string, key: string | undefined): Promise<string[]> {
  const answer = await callService("Gemini", `${trimUrl(baseUrl)}/v1beta/models?pageSize=1000`, {
    headers: { "x-goog-api-key": key ?? "" },
  });
  if (answer.status >= 400) {
    if (isBadGeminiKey(answer.status, answer.body)) throw refused("Gemini", answer.status, "GEMINI_API_KEY");
    throw new CheckFailed(`Gemini answered ${answer.status} to GET /v1beta/models. Check the base URL.`);
  }
  const models = Array.isArray(answer.body["models"])
    ? (answer.body["models"] as { name?: unknown; supportedGenerationMethods?: unknown }[])
    : [];
  return models
    .filter(
      (m) =>
        Array.isArray(m.supportedGenerationMethods) &&
        m.supportedGenerationMethods.includes("generateContent"),
    )
    .map((m) => String(m.name ?? "").replace(/^models\//, ""))
    .filter(Boolean);
}

async function answerGemini(baseUrl: string, key: string | undefined, model: string): Promise<void> {
  const answer = await callService(
    "Gemini",
    `${trimUrl(baseUrl)}/v1beta/models/${encodeURIComponent(model)}:generateContent`,
    {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": key ?? "" },
      body: JSON.stringify({
        contents: [{ role: "user", parts: [{ text: "ping" }] }],
        generationConfig: { maxOutputTokens: 1 },
      }),
      timeoutMs: 60_000,
    },
  );
  if (isBadGeminiKey(answer.status, answer.body)) throw refused("Gemini", answer.status, "GEMINI_API_KEY");
  if (answer.status >= 400) throw notAnswered(model, answer.status, answer.body);
}

/** Google answers a bad key with 400 API_KEY_INVALID (or 403 for a key without the API enabled). */
function isBadGeminiKey(status: number, body: Record<string, unknown>): boolean {
  if (status === 401 || status === 403) return true;
  return status === 400 && JSON.stringify(body).includes("API_KEY_INVALID");
}

/** One Converse call of one token with the AWS credentials of the environment (the SDK's chain). */
async function answerBedrock(baseUrl: string, _key: string | undefined, model: string): Promise<void> {
  const { BedrockRuntimeClient, ConverseCommand } = await import("@aws-sdk/client-bedrock-runtime");
  // AWS's own host names its region; any other URL (a gateway, a VPC endpoint) is the endpoint.
  const region = /^https:\/\/bedrock-runtime\.([a-z0-9-]+)\.amazonaws\.com/.exec(baseUrl)?.[1];
  const client = new BedrockRuntimeClient(
    region
      ? { region, maxAttempts: 1 }
      : { region: process.env["AWS_REGION"] ?? "us-east-1", endpoint: trimUrl(baseUrl), maxAttempts: 1 },
  );
  try {
    await client.send(
      new ConverseCommand({
        modelId: model,
        messages: [{ role: "user", content: [{ text: "ping" }] }],
        inferenceConfig: { maxTokens: 1 },
      }),
    );
  } catch (err) {
    const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
    if (e.name === "CredentialsProviderError") {
      throw new CheckFailed(
        "No AWS credentials found. Fix: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, or run on an instance role), then run setup again.",
      );
    }
    const status = e.$metadata?.httpStatusCode;
    if (status === 403 || e.name === "UnrecognizedClientException" || e.name === "AccessDeniedException") {
      throw new CheckFailed(
        `Bedrock refused the AWS credentials (${e.name}: ${e.message}). Check them and that the account has access to ${model}.`,
      );
    }
    throw new CheckFailed(
      `The model '${model}' did not answer on Bedrock (${e.name}: ${e.message}). Check the model id and region.`,
    );
  } finally {
    client.destroy();
  }
}

function notAnswered(model: string, status: number, body: Record<string, unknown>): CheckFailed {
  const error = body["error"] as { message?: string } | undefined;
  const message = error?.message ?? "";
  return new CheckFailed(
    `The model '${model}' did not answer (HTTP ${status}${message ? `: ${message}` : ""}). Check the model name.`,
  );
}
