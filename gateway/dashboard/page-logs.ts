/** The tail of the gateway's log file (`HERALD_HOME/logs/herald.log`, pino JSON lines), newest last. */
import { formatTime, html, type SafeHtml } from "./html.js";

const LEVELS: Record<number, string> = {
  10: "trace",
  20: "debug",
  30: "info",
  40: "warn",
  50: "error",
  60: "fatal",
};
/** Fields shown in the line's own columns, not among the rest. */
const SHOWN = new Set(["level", "time", "msg", "pid", "hostname", "v"]);

/** The log lines as a table; lines that are not JSON are shown as they are. */
export function logsFragment(
  tail: { file: string; lines: string[] } | undefined,
  minLevel: number,
): SafeHtml {
  const filter = html`<form class="search" method="get" action="/dashboard/logs">
<div><label for="level">Lowest level</label><select id="level" name="level">${[30, 40, 50].map(
    (l) => html`<option value="${l}"${l === minLevel ? html` selected` : ""}>${LEVELS[l]}</option>`,
  )}</select></div><button type="submit">Show</button></form>`;
  if (!tail)
    return html`${filter}<p class="muted">No log file yet: the gateway writes HERALD_HOME/logs/herald.log when file logging is on.</p>`;
  const rows: SafeHtml[] = [];
  for (const line of tail.lines) {
    let entry: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(line);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed))
        entry = parsed as Record<string, unknown>;
    } catch {
      entry = undefined;
    }
    if (!entry) {
      if (minLevel <= 30) rows.push(html`<tr><td></td><td></td><td><pre>${line}</pre></td></tr>`);
      continue;
    }
    const level = typeof entry["level"] === "number" ? entry["level"] : 30;
    if (level < minLevel) continue;
    const rest = Object.entries(entry)
      .filter(([k]) => !SHOWN.has(k))
      .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
      .join(" ");
    const time = typeof entry["time"] === "number" ? formatTime(entry["time"]) : String(entry["time"] ?? "");
    rows.push(
      html`<tr><td class="opt">${time}</td><td class="${level >= 50 ? "bad" : ""}">${LEVELS[level] ?? String(level)}</td><td>${String(entry["msg"] ?? "")}${rest ? html`<div class="muted">${rest}</div>` : ""}</td></tr>`,
    );
  }
  return html`${filter}<p class="muted">The last ${tail.lines.length} lines of ${tail.file}, newest last.</p>
${
  rows.length
    ? html`<div class="table-wrap"><table id="log-table"><thead><tr><th scope="col" class="opt">time (UTC)</th><th scope="col">level</th><th scope="col">message</th></tr></thead><tbody>${rows}</tbody></table></div>`
    : html`<p class="muted">No lines at this level.</p>`
}`;
}
