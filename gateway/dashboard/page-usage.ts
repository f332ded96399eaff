/**
 * Token usage by model, by agent and by user, over a chosen period (the usage ledger the turns write);
 * `?agent=` keeps one agent's.
 */
import { UNKNOWN_AGENT } from "../../sessions/index.js";
import type { UsageLine } from "../../sessions/types.js";
import { html, type SafeHtml } from "./html.js";
import { agentFilter } from "./layout.js";
import type { DashboardSources } from "./types.js";
import type { UsageRollup } from "./usage-rollup.js";

/** The periods offered, as `?since=` values: the last 24 hours, whole UTC days up to now, or all. */
export const USAGE_PERIODS: Record<string, [label: string, days: number | "all" | "24h"]> = {
  "24h": ["last 24 hours", "24h"],
  "7d": ["today and the 6 days before (UTC)", 7],
  "30d": ["today and the 29 days before (UTC)", 30],
  all: ["all time", "all"],
};

const n = (v: number) => v.toLocaleString("en-US");

function rows(lines: UsageLine[], first?: (l: UsageLine) => string): SafeHtml[] {
  return lines.map(
    (l) =>
      html`<tr>${first ? html`<th scope="row">${first(l)}</th><td>${l.model}</td>` : html`<th scope="row">${l.model}</th>`}<td class="num">${n(l.promptTokens)}</td><td class="num">${n(l.completionTokens)}</td><td class="num opt">${n(l.cachedTokens)}</td><td class="num">${n(l.calls)}</td></tr>`,
  );
}

/** Users' lines shown at most (the heaviest first). */
export const USAGE_USER_ROWS = 100;

const agentName = (l: UsageLine) =>
  l.agent === UNKNOWN_AGENT ? "unknown (session deleted)" : (l.agent ?? "default");

/** What the usage page shows. */
export interface UsageData {
  period: string;
  byModel: UsageLine[];
  byUser: UsageLine[];
  /** Lines by agent and model; empty: no agent table (one agent's page, or no further agents). */
  byAgent?: UsageLine[];
  /** Every agent's name when there are several (the filter's links), and the one shown. */
  agents?: readonly string[];
  agent?: string | undefined;
}

/** The period picker, the agent filter and the tables; the user table keeps the heaviest lines. */
export function usageFragment(data: UsageData): SafeHtml {
  const heaviest = [...data.byUser].sort((a, b) => b.promptTokens - a.promptTokens).slice(0, USAGE_USER_ROWS);
  const picker = html`<form class="search" method="get" action="/dashboard/usage">
<div><label for="since">Period</label><select id="since" name="since">${Object.entries(USAGE_PERIODS).map(
    ([value, [label]]) =>
      html`<option value="${value}"${value === data.period ? html` selected` : ""}>${label}</option>`,
  )}</select></div>${data.agent ? html`<input type="hidden" name="agent" value="${data.agent}">` : ""}<button type="submit">Show</button></form>`;
  const filter = agentFilter(
    data.agents ?? [],
    data.agent,
    (a) => `/dashboard/usage?since=${data.period}${a ? `&agent=${encodeURIComponent(a)}` : ""}`,
    "all",
  );
  const head = (first: SafeHtml) =>
    html`<thead><tr>${first}<th scope="col" class="num">tokens in</th><th scope="col" class="num">tokens out</th><th scope="col" class="num opt">cached</th><th scope="col" class="num">model calls</th></tr></thead>`;
  const of = data.agent ? ` of agent ${data.agent}` : "";
  if (!data.byModel.length)
    return html`${picker}${filter}<p class="muted">No model calls${of} in this period.</p>`;
  const byAgent = data.byAgent?.length
    ? html`<section aria-labelledby="by-agent"><h2 id="by-agent">By agent</h2><div class="table-wrap"><table id="usage-by-agent">${head(html`<th scope="col">agent</th><th scope="col">model</th>`)}<tbody>${rows(data.byAgent, agentName)}</tbody></table></div></section>`
    : "";
  return html`${picker}${filter}
<section aria-labelledby="by-model"><h2 id="by-model">By model${of}</h2><div class="table-wrap"><table id="usage-by-model">${head(html`<th scope="col">model</th>`)}<tbody>${rows(data.byModel)}</tbody></table></div></section>
${byAgent}<section aria-labelledby="by-user"><h2 id="by-user">By user${of}, most tokens first</h2><div class="table-wrap"><table id="usage-by-user">${head(html`<th scope="col">user</th><th scope="col">model</th>`)}<tbody>${rows(heaviest, (l) => l.user ?? "")}</tbody></table></div>${
    data.byUser.length > heaviest.length
      ? html`<p class="muted">The ${heaviest.length} heaviest of ${data.byUser.length.toLocaleString("en-US")} user and model lines.</p>`
      : ""
  }</section>`;
}

/**
 * The usage page for `?since=` and `?agent=` (one of `default` and the further agents `furtherAgents`;
 * anything else shows every agent's).
 */
export async function usageBody(
  query: URLSearchParams,
  ledger: NonNullable<DashboardSources["usage"]>,
  rollup: UsageRollup,
  furtherAgents: readonly string[],
  now: number,
): Promise<SafeHtml> {
  const asked = query.get("since") ?? "24h";
  const period = asked in USAGE_PERIODS ? asked : "24h";
  const days = USAGE_PERIODS[period]![1];
  const agents = furtherAgents.length ? ["default", ...furtherAgents] : [];
  const wanted = query.get("agent") ?? "";
  const agent = agents.includes(wanted) ? wanted : undefined;
  const sum = async (by: "model" | "user" | "agent") =>
    days === "24h" ? ledger.summary({ since: now - 86_400_000, by, agent }) : rollup.summary(days, by, agent);
  const byAgent = agents.length && !agent ? await sum("agent") : [];
  return usageFragment({
    period,
    byModel: await sum("model"),
    byUser: await sum("user"),
    byAgent,
    agents,
    agent,
  });
}

/** A session's usage under its transcript. */
export function sessionUsage(lines: UsageLine[]): SafeHtml {
  if (!lines.length) return html``;
  return html`<h2>Usage</h2><div class="table-wrap"><table id="session-usage"><thead><tr><th scope="col">model</th><th scope="col" class="num">tokens in</th><th scope="col" class="num">tokens out</th><th scope="col" class="num opt">cached</th><th scope="col" class="num">model calls</th></tr></thead><tbody>${rows(lines)}</tbody></table></div>`;
}
