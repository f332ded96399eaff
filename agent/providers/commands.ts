/**
 * `/model`, `/reasoning` and `/usage` as a `CommandModule`. They read and write only the session's
 * settings and the usage ledger (synchronous SQLite), so they answer at once, also while a turn runs;
 * a switch applies from the session's next turn.
 */
import type { CommandContext, CommandModule } from "../../core/commands.js";
import type { SessionStore, UsageLedger, UsageLine } from "../../sessions/types.js";
import type { ProviderCatalog } from "./catalog.js";
import type { SessionModelStore } from "./settings.js";
import { REASONING_SETTINGS, type ResolvedModel, type SessionModelSettings } from "./types.js";

export interface ProviderCommandsOptions {
  catalog: ProviderCatalog;
  settings: SessionModelStore;
  sessions: Pick<SessionStore, "list">;
  usage: UsageLedger;
  /** The fallback chain (`model.fallbacks`): listed and selectable like declared models. */
  fallbacks?: readonly string[] | undefined;
  /** Lines `/usage` adds for a session key (its cloud sandbox's hours and cost); must not throw. */
  extraUsage?: ((sessionKey: string) => string | undefined) | undefined;
}

/** The commands; see the file comment. */
export function providerCommands(options: ProviderCommandsOptions): CommandModule {
  const { catalog, settings } = options;
  /** The active session of the command's key, if one is open yet. */
  const sessionOf = (ctx: CommandContext) =>
    options.sessions
      .list({ keyPrefix: ctx.sessionKey, activeOnly: true, limit: 5 })
      .find((s) => s.key === ctx.sessionKey)?.id;
  const current = (ctx: CommandContext): SessionModelSettings => settings.get(ctx.sessionKey, sessionOf(ctx));
  const modelOf = (s: SessionModelSettings) => s.model ?? catalog.defaultModel;
  /** What `/model` offers: declared models, the default and the fallbacks. */
  const offered = () => {
    const list = catalog.list();
    for (const ref of options.fallbacks ?? []) {
      const m = catalog.resolve(ref);
      if (m && !list.some((l) => l.ref === m.ref)) list.push(m);
    }
    return list;
  };

  return {
    commands: {
      model: {
        description: "list the models, or switch this session's model: /model <name>",
        run: (ctx) => {
          const arg = ctx.args.trim();
          const session = current(ctx);
          if (!arg) return modelList(offered(), modelOf(session), session.model !== undefined);
          if (arg === "reset") {
            settings.set(ctx.sessionKey, sessionOf(ctx), { model: undefined });
            return `Back to the default model, ${catalog.defaultModel}.`;
          }
          const target = pickModel(catalog, offered(), arg, ctx.isOwner === true);
          if (!target) {
            return `There is no model '${arg}' here. ${modelList(offered(), modelOf(session), session.model !== undefined)}`;
          }
          settings.set(ctx.sessionKey, sessionOf(ctx), { model: target.ref });
          const reasoning = session.reasoning && session.reasoning !== "off" && !target.info?.reasoning;
          return `Switched this session to ${target.ref}.${reasoning ? ` (It declares no reasoning effort, so /reasoning ${session.reasoning} is not sent to it.)` : ""}`;
        },
      },
      reasoning: {
        description: "show or set this session's reasoning effort: /reasoning low|medium|high|off",
        run: (ctx) => {
          const arg = ctx.args.trim().toLowerCase();
          const session = current(ctx);
          const model = catalog.resolve(modelOf(session));
          const supported = model?.info?.reasoning === true;
          const note = supported
            ? ""
            : ` ${model?.ref ?? modelOf(session)} declares no reasoning support (reasoning: true in config.yaml), so nothing is sent to it.`;
          if (!arg) return `Reasoning effort: ${session.reasoning ?? "off"}.${note}`;
          if (!(REASONING_SETTINGS as readonly string[]).includes(arg)) {
            return `Use /reasoning low, medium, high or off (got '${arg}').`;
          }
          const value = arg as (typeof REASONING_SETTINGS)[number];
          settings.set(ctx.sessionKey, sessionOf(ctx), { reasoning: value === "off" ? undefined : value });
          return `Reasoning effort for this session: ${value}.${value === "off" ? "" : note}`;
        },
      },
      usage: {
        description: "tokens and estimated cost of this session; /usage all for the owner",
        run: (ctx) => {
          const arg = ctx.args.trim().toLowerCase();
          if (arg === "all") {
            if (!ctx.isOwner) return "Only the owner can see everyone's usage.";
            return usageAll(options.usage, catalog);
          }
          if (arg) return "Use /usage for this session, or /usage all (owner only).";
          const sessionId = sessionOf(ctx);
          const lines = sessionId ? options.usage.forSession(sessionId) : [];
          const extra = options.extraUsage?.(ctx.sessionKey);
          const text = usageText("Usage of this session", lines, catalog);
          return extra ? `${text}\n${extra}` : text;
        },
      },
    },
  };
}

/**
 * A model for `/model <arg>`: an offered model by reference or name, or a provider (its first model).
 * Only the owner may name a model config does not list (`provider/any-model`, or any name on the legacy
 * endpoint): everyone else could otherwise run up costs on models nobody priced.
 */
function pickModel(
  catalog: ProviderCatalog,
  offered: readonly ResolvedModel[],
  arg: string,
  owner: boolean,
): ResolvedModel | undefined {
  const exact = offered.find((m) => m.ref === arg || m.model === arg);
  if (exact) return exact;
  const provider = catalog.providers().find((p) => p.name === arg);
  if (provider?.models[0]) return catalog.resolve(`${provider.name}/${provider.models[0].name}`);
  if (!owner) return undefined;
  const slash = arg.indexOf("/");
  if (slash > 0 && catalog.providers().some((p) => p.name === arg.slice(0, slash)))
    return catalog.resolve(arg);
  // The legacy endpoint alone serves whatever name it is given.
  if (catalog.providers().every((p) => p.models.length === 0)) return catalog.resolve(arg);
  return undefined;
}

function modelList(offered: readonly ResolvedModel[], active: string, own: boolean): string {
  const lines = offered.map((m) => {
    const facts = [
      m.info?.contextTokens ? `${Math.round(m.info.contextTokens / 1000)}k context` : "",
      m.info?.price ? `$${m.info.price.input}/$${m.info.price.output} per M in/out` : "",
      m.info?.reasoning ? "reasoning" : "",
      m.info?.vision ? "vision" : "",
    ].filter(Boolean);
    const mark = m.ref === active ? " ← this session" : "";
    return `• ${m.ref}${facts.length ? ` (${facts.join(", ")})` : ""}${mark}`;
  });
  return [
    `Model: ${active}${own ? "" : " (default)"}`,
    "Available:",
    ...lines,
    "Switch with /model <name>; /model reset goes back to the default.",
  ].join("\n");
}

const n = (value: number) => value.toLocaleString("en-US");

type Tokens = Pick<
  UsageLine,
  "promptTokens" | "completionTokens" | "cachedTokens" | "cacheWriteTokens" | "reasoningTokens"
>;

/** `1,234 in (56 cached, 700 written to cache), 78 out (30 reasoning)`; the parts that are 0 unsaid. */
function tokens(l: Tokens): string {
  const written = l.cacheWriteTokens ? `, ${n(l.cacheWriteTokens)} written to cache` : "";
  const reasoning = l.reasoningTokens ? ` (${n(l.reasoningTokens)} reasoning)` : "";
  return `${n(l.promptTokens)} in (${n(l.cachedTokens)} cached${written}), ${n(l.completionTokens)} out${reasoning}`;
}

function addTokens(into: Required<Tokens>, l: Tokens): void {
  into.promptTokens += l.promptTokens;
  into.completionTokens += l.completionTokens;
  into.cachedTokens += l.cachedTokens;
  into.cacheWriteTokens += l.cacheWriteTokens ?? 0;
  into.reasoningTokens += l.reasoningTokens ?? 0;
}

const zero = () => ({
  promptTokens: 0,
  completionTokens: 0,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
});

function dollars(value: number | undefined): string {
  if (value === undefined) return "no price configured";
  return `$${value < 0.01 ? value.toFixed(4) : value.toFixed(2)}`;
}

/** Lines per model, then the total; the cost sums the priced models (and says when some have no price). */
export function usageText(title: string, lines: readonly UsageLine[], catalog: ProviderCatalog): string {
  if (lines.length === 0) return `${title}: no model calls yet.`;
  const total = { ...zero(), calls: 0 };
  let cost = 0;
  let unpriced = false;
  const out = lines.map((l) => {
    addTokens(total, l);
    total.calls += l.calls;
    const c = catalog.costOf(l);
    if (c === undefined) unpriced = true;
    else cost += c;
    return `• ${l.model}: ${tokens(l)}, ${l.calls} call${l.calls === 1 ? "" : "s"} — ${dollars(c)}`;
  });
  const priced =
    cost > 0 || !unpriced
      ? `${dollars(cost)} estimated${unpriced ? " (some models have no price)" : ""}`
      : "no price configured";
  return [`${title} (${n(total.calls)} model calls):`, ...out, `Total: ${tokens(total)} — ${priced}`].join(
    "\n",
  );
}

function usageAll(ledger: UsageLedger, catalog: ProviderCatalog): string {
  const byModel = usageText("All usage by model", ledger.summary({ by: "model" }), catalog);
  const users = new Map<string, UsageLine[]>();
  for (const l of ledger.summary({ by: "user" })) {
    const key = l.user ?? "unknown";
    users.set(key, [...(users.get(key) ?? []), l]);
  }
  const byUser = [...users].map(([user, lines]) => {
    const sum = zero();
    for (const l of lines) addTokens(sum, l);
    const costs = lines.map((l) => catalog.costOf(l));
    const cost = costs.every((c) => c === undefined)
      ? undefined
      : costs.reduce<number>((a, c) => a + (c ?? 0), 0);
    return `• ${user}: ${tokens(sum)} — ${dollars(cost)}`;
  });
  return [byModel, "", "By user:", ...(byUser.length ? byUser : ["none yet"])].join("\n");
}
