/** Pairing requests (approve, deny) and approvals of dangerous commands waiting for an answer. */
import type { PairingRequest } from "../../sessions/types.js";
import { ago, html, type SafeHtml } from "./html.js";
import { actionButton } from "./layout.js";
import type { ApprovalView } from "./types.js";

/** The pairing and approvals lists. */
export function accessFragment(data: {
  pairing: PairingRequest[];
  approvals: ApprovalView[] | undefined;
  csrf: string;
  now: number;
}): SafeHtml {
  const { csrf, now } = data;
  const pairingRows = data.pairing.map((r) => {
    const who = `${r.platform}:${r.userId}`;
    const fields = { platform: r.platform, userId: r.userId };
    return html`<tr><th scope="row">${who}</th><td>${r.userName ?? ""}</td><td>${ago(r.createdAt, now)}</td><td>
${actionButton({ action: "/dashboard/pairing/approve", label: "Approve", csrf, fields, ariaLabel: `Approve ${who}` })}
${actionButton({ action: "/dashboard/pairing/deny", label: "Deny", csrf, fields, kind: "danger", ariaLabel: `Deny ${who}` })}</td></tr>`;
  });
  const approvalRows = (data.approvals ?? []).map((a) => {
    const fields = { sessionKey: a.sessionKey };
    return html`<tr><td><a href="/dashboard/sessions/${a.sessionId}">${a.sessionKey}</a></td><td><pre>${a.command}</pre><div class="muted">${a.ruleDescription}</div></td><td>${a.expiresAt <= now ? "lapsed" : `in ${Math.ceil((a.expiresAt - now) / 60_000)} min`}</td><td>
${actionButton({ action: "/dashboard/approvals/approve", label: "Approve once", csrf, fields, confirm: `Run this command?\n${a.command}` })}
${actionButton({ action: "/dashboard/approvals/deny", label: "Deny", csrf, fields, kind: "danger" })}</td></tr>`;
  });
  return html`<section aria-labelledby="pairing-h"><h2 id="pairing-h">Pairing requests</h2>
<p class="muted">People who messaged the bot and got a pairing code. Approving admits them on that platform (they are told in their chat).</p>
${
  pairingRows.length
    ? html`<div class="table-wrap"><table id="pairing-table"><thead><tr><th scope="col">user</th><th scope="col">name</th><th scope="col">asked</th><th scope="col">answer</th></tr></thead><tbody>${pairingRows}</tbody></table></div>`
    : html`<p class="muted" id="no-pairing">No pending requests.</p>`
}</section>
<section aria-labelledby="approvals-h"><h2 id="approvals-h">Commands waiting for approval</h2>
${
  data.approvals === undefined
    ? html`<p class="muted">Approvals are not available in this process.</p>`
    : approvalRows.length
      ? html`<div class="table-wrap"><table><thead><tr><th scope="col">session</th><th scope="col">command</th><th scope="col">lapses</th><th scope="col">answer</th></tr></thead><tbody>${approvalRows}</tbody></table></div>`
      : html`<p class="muted">Nothing is waiting.</p>`
}</section>`;
}
