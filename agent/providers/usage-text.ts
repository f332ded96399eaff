/**
 * Usage as chat and terminal text: a session's or a period's lines by model with the estimated cost,
 * and the owner's report of everything (`/usage all`, `herald usage`) by model, agent and user.
 */
import { UNKNOWN_AGENT } from "../../sessions/index.js";
import type { UsageLedger, UsageLine } from "../../sessions/types.js";
import type { ProviderCatalog } from "./catalog.js";

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

/** One line per group (a user, an agent): its tokens over every model and their cost. */
function groupLines(
  lines: readonly UsageLine[],
  groupOf: (l: UsageLine) => string,
  catalog: ProviderCatalog,
): string[] {
  const groups = new Map<string, UsageLine[]>();
  for (const l of lines) {
    const key = groupOf(l);
    groups.set(key, [...(groups.get(key) ?? []), l]);
  }
  return [...groups].map(([group, of]) => {
    const sum = zero();
    for (const l of of) addTokens(sum, l);
    const costs = of.map((l) => catalog.costOf(l));
    const cost = costs.every((c) => c === undefined)
      ? undefined
      : costs.reduce<number>((a, c) => a + (c ?? 0), 0);
    return `• ${group}: ${tokens(sum)} — ${dollars(cost)}`;
  });
}

/** What {@link usageReport} covers. */
export interface UsageReportOptions {
  /** Epoch ms; absent: from the first usage. */
  since?: number | undefined;
  /** One agent's usage (`default` for the default agent's); absent: every agent's, with a line per agent. */
  agent?: string | undefined;
  /** How the period reads in the title (`all time`, `the last 7 days`). @defaultValue none */
  period?: string | undefined;
}

/**
 * Everything recorded, by model (with the total and cost), then by agent (when a further agent, or a
 * pruned session's, has usage and no agent was asked for) and by user.
 */
export function usageReport(
  ledger: Pick<UsageLedger, "summary">,
  catalog: ProviderCatalog,
  options: UsageReportOptions = {},
): string {
  const { since, agent } = options;
  const of = agent ? ` of agent ${agent}` : "";
  const when = options.period ? `, ${options.period}` : "";
  const byModel = usageText(
    `All usage${of} by model${when}`,
    ledger.summary({ since, agent, by: "model" }),
    catalog,
  );
  const out = [byModel];
  if (!agent) {
    const byAgent = ledger.summary({ since, by: "agent" });
    if (byAgent.some((l) => l.agent !== "default")) {
      const name = (l: UsageLine) =>
        l.agent === UNKNOWN_AGENT ? "unknown (sessions deleted)" : (l.agent ?? "default");
      out.push("", "By agent:", ...groupLines(byAgent, name, catalog));
    }
  }
  const byUser = groupLines(
    ledger.summary({ since, agent, by: "user" }),
    (l) => l.user ?? "unknown",
    catalog,
  );
  out.push("", "By user:", ...(byUser.length ? byUser : ["none yet"]));
  return out.join("\n");
}
