/**
 * `/model`, `/reasoning` and `/usage` as a `CommandModule`. They read and write only the session's
 * settings and the usage ledger (synchronous SQLite), so they answer at once, also while a turn runs;
 * a switch applies from the session's next turn.
 */
import type { CommandContext, CommandModule } from "../../core/commands.js";
import type { SessionStore, UsageLedger } from "../../sessions/types.js";
import type { ProviderCatalog } from "./catalog.js";
import type { SessionModelStore } from "./settings.js";
import { REASONING_SETTINGS, type ResolvedModel, type SessionModelSettings } from "./types.js";
import { usageReport, usageText } from "./usage-text.js";

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
        description:
          "tokens and estimated cost of this session; /usage all [agent] for the owner (by agent and user)",
        run: (ctx) => {
          const [arg = "", agent, ...rest] = ctx.args.trim().toLowerCase().split(/\s+/);
          if (arg === "all" && rest.length === 0) {
            if (!ctx.isOwner) return "Only the owner can see everyone's usage.";
            return usageReport(options.usage, catalog, { agent });
          }
          if (arg) return "Use /usage for this session, or /usage all [agent] (owner only).";
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
