/** Sessions: the newest, full-text search (FTS5), a transcript with its tool calls, export as JSON or Markdown. */
import type { ChatMessage } from "../../core/types.js";
import type { SearchHit, Session, StoredMessage } from "../../sessions/types.js";
import { ago, escapeHtml, formatTime, html, raw, type SafeHtml } from "./html.js";
import { actionButton, agentFilter } from "./layout.js";

/** Sessions listed at once (the newest first). */
export const SESSIONS_SHOWN = 100;

/** The search form and either the hits for `query` or the newest sessions. */
export function sessionsFragment(data: {
  query: string;
  sessions: Session[];
  hits: SearchHit[] | undefined;
  /** Every agent's name when there are several (the filter's links), and the one shown. */
  agents?: readonly string[];
  agent?: string | undefined;
  now: number;
}): SafeHtml {
  const form = html`<form class="search" method="get" action="/dashboard/sessions" role="search">
<div><label for="q">Search all messages</label><input id="q" name="q" type="search" value="${data.query}" placeholder="words or &quot;a phrase&quot;"></div>
<button type="submit">Search</button>${data.query ? html` <a href="/dashboard/sessions">Clear</a>` : ""}</form>`;
  if (data.hits) {
    const rows = data.hits.map(
      (h) =>
        html`<tr><td><a href="/dashboard/sessions/${h.sessionId}#m${h.seq}">${h.sessionKey}</a></td><td>${h.role}</td><td>${highlight(h.snippet)}</td><td class="opt">${formatTime(h.createdAt)}</td></tr>`,
    );
    return html`${form}<h2>${data.hits.length} match${data.hits.length === 1 ? "" : "es"} for “${data.query}”, newest first</h2>
${
  rows.length
    ? html`<div class="table-wrap"><table id="search-results"><thead><tr><th scope="col">session</th><th scope="col">role</th><th scope="col">text</th><th scope="col" class="opt">when (UTC)</th></tr></thead><tbody>${rows}</tbody></table></div>`
    : html`<p class="muted">Nothing found.</p>`
}`;
  }
  const rows = data.sessions.map(
    (s) =>
      html`<tr><td><a href="/dashboard/sessions/${s.id}">${s.title ?? s.key}</a>${s.title ? html`<div class="muted">${s.key}</div>` : ""}</td><td class="num">${s.messageCount}</td><td>${ago(s.lastActiveAt, data.now)}</td><td class="opt">${s.endedAt === undefined ? html`<span class="ok">active</span>` : `ended (${s.endReason ?? "?"})`}</td></tr>`,
  );
  const filter = agentFilter(
    data.agents ?? [],
    data.agent,
    (a) => `/dashboard/sessions${a ? `?agent=${encodeURIComponent(a)}` : ""}`,
    "all",
  );
  return html`${form}${filter}<h2>Newest sessions${data.agent ? ` of ${data.agent}` : ""}</h2>
${
  rows.length
    ? html`<div class="table-wrap"><table id="sessions-table"><thead><tr><th scope="col">session</th><th scope="col" class="num">messages</th><th scope="col">last active</th><th scope="col" class="opt">state</th></tr></thead><tbody>${rows}</tbody></table></div>
${data.sessions.length >= SESSIONS_SHOWN ? html`<p class="muted">The ${SESSIONS_SHOWN} most recently active; search to find older ones.</p>` : ""}`
    : html`<p class="muted">No sessions yet.</p>`
}`;
}

/** One session's transcript with its tool calls, export links and reset. */
export function transcriptBody(session: Session, messages: StoredMessage[], csrf: string): SafeHtml {
  const results = new Map<string, string>();
  for (const m of messages)
    if (m.message.role === "tool") results.set(m.message.tool_call_id, m.message.content);
  const items = messages.filter((m) => m.message.role !== "tool").map((m) => messageItem(m, results));
  return html`<dl class="cards">
<div class="card"><dt class="muted">key</dt><dd>${session.key}</dd></div>
<div class="card"><dt class="muted">user</dt><dd>${session.userId}</dd></div>
<div class="card"><dt class="muted">started (UTC)</dt><dd>${formatTime(session.createdAt)}</dd></div>
<div class="card"><dt class="muted">state</dt><dd>${session.endedAt === undefined ? "active" : `ended ${formatTime(session.endedAt)} (${session.endReason ?? "?"})`}</dd></div>
</dl>
<div class="actions"><a class="button" href="/dashboard/sessions/${session.id}/export?format=json" download>Export JSON</a>
<a class="button" href="/dashboard/sessions/${session.id}/export?format=md" download>Export Markdown</a>
${
  session.endedAt === undefined
    ? actionButton({
        action: `/dashboard/sessions/${session.id}/reset`,
        label: "Reset session",
        csrf,
        kind: "danger",
        confirm: "End this session? The next message starts a fresh one.",
      })
    : ""
}</div>
<h2>Transcript</h2>${items.length ? items : html`<p class="muted">No messages.</p>`}`;
}

function messageItem(m: StoredMessage, results: Map<string, string>): SafeHtml {
  const msg = m.message;
  const calls =
    msg.role === "assistant"
      ? (msg.tool_calls ?? []).map(
          (c) =>
            html`<details class="tool"><summary>tool call: <code>${c.function.name}</code></summary><pre>${c.function.arguments}</pre>${
              results.has(c.id) ? html`<div class="muted">result</div><pre>${results.get(c.id)}</pre>` : ""
            }</details>`,
        )
      : [];
  const text = msg.content ?? "";
  return html`<article class="msg ${msg.role}" id="m${m.seq}"><header>${msg.role} · ${formatTime(m.createdAt)}</header>${text ? html`<pre>${text}</pre>` : ""}${calls}</article>`;
}

/** The session as JSON (the same shape as `herald sessions export`). */
export function exportJson(session: Session, messages: StoredMessage[]): string {
  return `${JSON.stringify({ session, messages: messages.map((m) => m.message) }, null, 2)}\n`;
}

/** The session as Markdown, tool calls and results included. */
export function exportMarkdown(session: Session, messages: StoredMessage[]): string {
  const out = [`# ${session.key}`, ""];
  for (const { message } of messages) out.push(markdownOf(message), "");
  return `${out.join("\n")}\n`;
}

function markdownOf(message: ChatMessage): string {
  if (message.role === "tool")
    return `**tool result** (${message.tool_call_id}):\n\n\`\`\`\n${message.content}\n\`\`\``;
  const calls =
    message.role === "assistant"
      ? (message.tool_calls ?? []).map(
          (c) => `\n\n**tool call** \`${c.function.name}\`: \`${c.function.arguments}\``,
        )
      : [];
  return `**${message.role}**: ${message.content ?? ""}${calls.join("")}`;
}

/** A search snippet with its `**match**` markers as <mark>, everything else escaped. */
function highlight(snippet: string): SafeHtml {
  return raw(escapeHtml(snippet).replace(/\*\*(.+?)\*\*/g, "<mark>$1</mark>"));
}
