/** Cron jobs of every owner: list with recent runs, run now, pause/resume, remove. */
import type { CronJobView, CronRun } from "../../scheduler/types.js";
import { formatTime, html, type SafeHtml } from "./html.js";
import { actionButton } from "./layout.js";

/** Runs of each job shown in its history. */
export const RUNS_SHOWN = 5;

/** The jobs table. */
export function cronFragment(jobs: { job: CronJobView; runs: CronRun[] }[], csrf: string): SafeHtml {
  if (!jobs.length)
    return html`<p class="muted">No scheduled jobs. The agent creates them when asked (“every morning at 8, send me…”), or <code>herald cron add</code>.</p>`;
  const rows = jobs.map(({ job, runs }) => {
    const base = `/dashboard/cron/${job.id}`;
    const name = job.name || job.id;
    const history = runs.map(
      (r) =>
        html`<li><span class="${r.status === "ok" || r.status === "silent" ? "ok" : r.status === "queued" || r.status === "running" ? "" : "bad"}">${r.status}</span> · ${r.kind} · ${formatTime(r.startedAt ?? r.createdAt)}${r.error ? html` · <span class="bad">${r.error}</span>` : ""}${r.output ? html`<details><summary>output</summary><pre>${r.output}</pre></details>` : ""}</li>`,
    );
    return html`<tr id="job-${job.id}"><th scope="row">${name}<div class="muted">${job.id}</div></th><td>${job.schedule}<div class="muted">→ ${job.deliver}</div></td>
<td class="${job.state === "paused" ? "bad" : ""}">${job.state}<div class="muted">next: ${formatTime(job.nextRunAt)}</div></td>
<td>${history.length ? html`<ul class="runs">${history}</ul>` : html`<span class="muted">no runs yet</span>`}</td>
<td>${actionButton({ action: `${base}/run`, label: "Run now", csrf, ariaLabel: `Run ${name} now` })}
${
  job.state === "paused"
    ? actionButton({
        action: `${base}/resume`,
        label: "Resume",
        csrf,
        kind: "secondary",
        ariaLabel: `Resume ${name}`,
      })
    : job.state === "active"
      ? actionButton({
          action: `${base}/pause`,
          label: "Pause",
          csrf,
          kind: "secondary",
          ariaLabel: `Pause ${name}`,
        })
      : ""
}
${actionButton({ action: `${base}/remove`, label: "Remove", csrf, kind: "danger", confirm: `Remove the job “${name}” and its history?`, ariaLabel: `Remove ${name}` })}</td></tr>`;
  });
  return html`<div class="table-wrap"><table id="cron-table"><thead><tr><th scope="col">job</th><th scope="col">schedule</th><th scope="col">state</th><th scope="col">recent runs (UTC)</th><th scope="col">actions</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}
