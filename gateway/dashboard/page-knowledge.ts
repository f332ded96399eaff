/** Skills and memory: view both; edit through the same APIs (and guards) as the agent's tools. */
import type { MemoryView } from "../../skills/memory/types.js";
import type { SkillIssue, SkillSummary } from "../../skills/types.js";
import { html, type SafeHtml } from "./html.js";
import { actionButton, agentFilter } from "./layout.js";

/**
 * The owners' MEMORY.md and USER.md entries with remove buttons and an add form each, every other
 * user's own files read-only, then the skills list.
 */
export function knowledgeBody(data: {
  memory: MemoryView[] | undefined;
  users?: { key: string; views: MemoryView[] }[] | undefined;
  skills: { skills: SkillSummary[]; issues: SkillIssue[] } | undefined;
  /** The further agents (the skills' agent filter; none: no filter), and the one whose skills are shown. */
  agents?: readonly string[] | undefined;
  agent?: string | undefined;
  csrf: string;
}): SafeHtml {
  const { csrf, agent } = data;
  const of = agent ? `?agent=${encodeURIComponent(agent)}` : "";
  const filter = agentFilter(
    data.agents ?? [],
    agent,
    (a) => `/dashboard/knowledge${a ? `?agent=${encodeURIComponent(a)}` : ""}`,
    "default",
  );
  const memory = (data.memory ?? []).map((view) => {
    const title = view.target === "memory" ? "MEMORY.md (the agent's notes)" : "USER.md (about the owners)";
    const entries = view.entries.map(
      (e, i) =>
        html`<li><pre>${e}</pre>${actionButton({ action: "/dashboard/memory/remove", label: "Remove", csrf, kind: "danger", fields: { target: view.target, oldText: e }, confirm: "Remove this entry?", ariaLabel: `Remove entry ${i + 1} of ${view.target}` })}</li>`,
    );
    return html`<section aria-labelledby="mem-${view.target}"><h2 id="mem-${view.target}">${title}</h2>
<p class="muted">${view.usedChars} of ${view.limitChars} characters</p>
${entries.length ? html`<ol>${entries}</ol>` : html`<p class="muted">Empty.</p>`}
<form method="post" action="/dashboard/memory/add"><input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="target" value="${view.target}">
<label for="add-${view.target}">New entry</label><input id="add-${view.target}" name="content" required maxlength="${view.limitChars}" size="60">
<button type="submit" aria-label="Add to ${view.target === "memory" ? "MEMORY.md" : "USER.md"}">Add</button></form></section>`;
  });
  const skills = (data.skills?.skills ?? []).map(
    (s) =>
      html`<tr><th scope="row"><a href="/dashboard/skills/${encodeURIComponent(s.name)}${of}">${s.name}</a></th><td>${s.description}</td><td>${s.source}</td><td>${s.unavailable ?? html`<span class="ok">ready</span>`}</td></tr>`,
  );
  const issues = (data.skills?.issues ?? []).map(
    (i) => html`<li><code>${i.file}</code> ${i.field}: ${i.message}</li>`,
  );
  const users = (data.users ?? []).map(
    ({ key, views }) =>
      html`<details><summary>${key}</summary>${views.map(
        (v) =>
          html`<h3>${v.target === "memory" ? "MEMORY.md" : "USER.md"} (${v.usedChars} of ${v.limitChars} characters)</h3>${v.entries.length ? html`<ol>${v.entries.map((e) => html`<li><pre>${e}</pre></li>`)}</ol>` : html`<p class="muted">Empty.</p>`}`,
      )}</details>`,
  );
  return html`${data.memory ? memory : html`<p class="muted">Memory is not available in this process.</p>`}
${users.length ? html`<section aria-labelledby="mem-users"><h2 id="mem-users">Other users' memory (read-only)</h2><p class="muted">Users who are not owners each have their own files (HERALD_HOME/memories/users/); the owners' memory above never reaches them, and theirs never reaches the owners.</p>${users}</section>` : ""}
<section aria-labelledby="skills-h"><h2 id="skills-h">Skills${agent ? ` of agent ${agent}` : ""}</h2>
${filter}
${
  skills.length
    ? html`<div class="table-wrap"><table><thead><tr><th scope="col">name</th><th scope="col">what</th><th scope="col">source</th><th scope="col">state</th></tr></thead><tbody>${skills}</tbody></table></div>`
    : html`<p class="muted">No skills.</p>`
}
${issues.length ? html`<h3>Skills that did not load</h3><ul>${issues}</ul>` : ""}
<p><a href="/dashboard/skills/new${of}">New skill</a></p></section>`;
}

/** One skill's SKILL.md in an editor (bundled skills are copied to HERALD_HOME/skills on save). */
export function skillBody(data: {
  name: string;
  content: string;
  isNew: boolean;
  /** The further agent whose folder holds the skill; undefined: the shared folder. */
  agent?: string | undefined;
  csrf: string;
}): SafeHtml {
  const agentField = data.agent ? { agent: data.agent } : undefined;
  return html`<form method="post" action="/dashboard/skills/${data.isNew ? "new" : encodeURIComponent(data.name)}">
<input type="hidden" name="_csrf" value="${data.csrf}">${data.agent ? html`<input type="hidden" name="agent" value="${data.agent}">` : ""}
${data.isNew ? html`<label for="name">Name</label><input id="name" name="name" required pattern="[a-z0-9][a-z0-9-]*" value="${data.name}">` : ""}
<label for="content">SKILL.md</label><textarea id="content" name="content" required spellcheck="false">${data.content}</textarea>
<p class="muted">Saved through the same checks as the agent's skill_manage tool (frontmatter, secrets, injected instructions); the previous version is kept.</p>
<button type="submit">Save</button> <a href="/dashboard/knowledge${data.agent ? `?agent=${encodeURIComponent(data.agent)}` : ""}">Back</a></form>
${data.isNew ? "" : actionButton({ action: `/dashboard/skills/${encodeURIComponent(data.name)}/delete`, label: "Delete skill", csrf: data.csrf, kind: "danger", confirm: `Delete the skill ${data.name}?`, fields: agentField })}`;
}
