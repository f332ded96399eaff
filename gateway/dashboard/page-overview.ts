/** The overview: adapters and their state, the job queue, turns and latency of the last hour, errors. */
import type { Activity } from "./activity.js";
import { barChart } from "./charts.js";
import { ago, html, type SafeHtml } from "./html.js";
import type { AdapterView, QueueView } from "./types.js";

/** The overview's live fragment. */
export function overviewFragment(data: {
  adapters: AdapterView[];
  queue: QueueView;
  activity: Activity;
  activeSessions: number;
  pendingPairing: number;
  now: number;
}): SafeHtml {
  const minutes = data.activity.minutes();
  const turnsLastHour = minutes.reduce((n, m) => n + m.turns, 0);
  const errors = data.activity.errors();
  const q = data.queue;
  const queueCards =
    "error" in q
      ? html`<div class="card"><div class="bad">Queue: no answer</div><div class="muted">${q.error}</div></div>`
      : html`<div class="card"><div class="n" id="queue-waiting">${q.waiting}</div>waiting in the queue</div>
<div class="card"><div class="n">${q.active}</div>turns running</div>
<div class="card"><div class="n">${q.workers}</div>workers</div>`;
  const adapters = data.adapters.map(
    (a) =>
      html`<tr><th scope="row">${a.platform}</th><td class="${a.state === "running" ? "ok" : "bad"}">${a.state}</td><td>${a.detail ?? ""}</td></tr>`,
  );
  const errorRows = errors
    .slice(0, 20)
    .map((e) => html`<tr><td>${ago(e.at, data.now)}</td><td>${e.source}</td><td>${e.message}</td></tr>`);
  return html`<section aria-labelledby="now-h"><h2 id="now-h">Now</h2><div class="cards">
<div class="card"><div class="n" id="turns-last-hour">${turnsLastHour}</div>turns in the last hour</div>
<div class="card"><div class="n">${data.activeSessions}</div>active sessions</div>
${queueCards}
<div class="card"><div class="n">${data.pendingPairing}</div>pairing requests</div>
<div class="card"><div class="n ${errors.length ? "bad" : ""}">${errors.length}</div>errors in the last hour</div>
</div></section>
<section aria-labelledby="charts-h"><h2 id="charts-h">Last hour</h2><div class="charts">
${barChart(
  minutes.map((m) => m.turns),
  "Turns per minute",
)}
${barChart(
  minutes.map((m) => m.p50Ms),
  "Median turn latency per minute",
  " ms",
)}
</div></section>
<section aria-labelledby="adapters-h"><h2 id="adapters-h">Adapters</h2><div class="table-wrap"><table>
<thead><tr><th scope="col">platform</th><th scope="col">state</th><th scope="col">detail</th></tr></thead>
<tbody>${adapters.length ? adapters : html`<tr><td colspan="3" class="muted">No adapter runs.</td></tr>`}</tbody></table></div></section>
<section aria-labelledby="errors-h"><h2 id="errors-h">Errors in the last hour</h2>
${
  errorRows.length
    ? html`<div class="table-wrap"><table><thead><tr><th scope="col">when</th><th scope="col">where</th><th scope="col">what</th></tr></thead><tbody>${errorRows}</tbody></table></div>`
    : html`<p class="muted">None.</p>`
}</section>`;
}
