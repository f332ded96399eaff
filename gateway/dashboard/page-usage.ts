/** Token usage by model and by user, over a chosen period (the usage ledger the turns write). */
import type { UsageLine } from "../../sessions/types.js";
import { html, type SafeHtml } from "./html.js";

/** The periods offered, as `?since=` values: the last 24 hours, whole UTC days up to now, or all. */
export const USAGE_PERIODS: Record<string, [label: string, days: number | "all" | "24h"]> = {
  "24h": ["last 24 hours", "24h"],
  "7d": ["today and the 6 days before (UTC)", 7],
  "30d": ["today and the 29 days before (UTC)", 30],
  all: ["all time", "all"],
};

const n = (v: number) => v.toLocaleString("en-US");

function rows(lines: UsageLine[], withUser: boolean): SafeHtml[] {
  return lines.map(
    (l) =>
      html`<tr>${withUser ? html`<th scope="row">${l.user ?? ""}</th><td>${l.model}</td>` : html`<th scope="row">${l.model}</th>`}<td class="num">${n(l.promptTokens)}</td><td class="num">${n(l.completionTokens)}</td><td class="num opt">${n(l.cachedTokens)}</td><td class="num">${n(l.calls)}</td></tr>`,
  );
}

/** Users' lines shown at most (the heaviest first). */
export const USAGE_USER_ROWS = 100;

/** The period picker and both tables; the user table keeps the heaviest lines. */
export function usageFragment(data: { period: string; byModel: UsageLine[]; byUser: UsageLine[] }): SafeHtml {
  const heaviest = [...data.byUser].sort((a, b) => b.promptTokens - a.promptTokens).slice(0, USAGE_USER_ROWS);
  const picker = html`<form class="search" method="get" action="/dashboard/usage">
<div><label for="since">Period</label><select id="since" name="since">${Object.entries(USAGE_PERIODS).map(
    ([value, [label]]) =>
      html`<option value="${value}"${value === data.period ? html` selected` : ""}>${label}</option>`,
  )}</select></div><button type="submit">Show</button></form>`;
  const head = (first: SafeHtml) =>
    html`<thead><tr>${first}<th scope="col" class="num">tokens in</th><th scope="col" class="num">tokens out</th><th scope="col" class="num opt">cached</th><th scope="col" class="num">model calls</th></tr></thead>`;
  if (!data.byModel.length) return html`${picker}<p class="muted">No model calls in this period.</p>`;
  return html`${picker}
<section aria-labelledby="by-model"><h2 id="by-model">By model</h2><div class="table-wrap"><table id="usage-by-model">${head(html`<th scope="col">model</th>`)}<tbody>${rows(data.byModel, false)}</tbody></table></div></section>
<section aria-labelledby="by-user"><h2 id="by-user">By user, most tokens first</h2><div class="table-wrap"><table id="usage-by-user">${head(html`<th scope="col">user</th><th scope="col">model</th>`)}<tbody>${rows(heaviest, true)}</tbody></table></div>${
    data.byUser.length > heaviest.length
      ? html`<p class="muted">The ${heaviest.length} heaviest of ${data.byUser.length.toLocaleString("en-US")} user and model lines.</p>`
      : ""
  }</section>`;
}

/** A session's usage under its transcript. */
export function sessionUsage(lines: UsageLine[]): SafeHtml {
  if (!lines.length) return html``;
  return html`<h2>Usage</h2><div class="table-wrap"><table id="session-usage"><thead><tr><th scope="col">model</th><th scope="col" class="num">tokens in</th><th scope="col" class="num">tokens out</th><th scope="col" class="num opt">cached</th><th scope="col" class="num">model calls</th></tr></thead><tbody>${rows(lines, false)}</tbody></table></div>`;
}
