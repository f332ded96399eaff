// The web chat page: reads the history, follows the chat's live stream (resuming after a reconnect
// from the last event it saw), sends messages, files and button choices, completes `/` commands, and
// lists, resumes, renames and searches the user's sessions.
import { Conversation } from "./conversation.js";
import { h, snippet } from "./render.js";

const $ = (id) => document.getElementById(id);
const meta = (name) => document.querySelector(`meta[name="${name}"]`)?.content ?? "";
const csrf = meta("herald-csrf");
const input = $("input");
const conv = new Conversation($("turns"), (promptId, button) =>
  send(button.data, { button: { promptId, label: button.label } }),
);
let commands = [];
let cursor = "";
let source;
let firstSeq;
let pending = [];
let picked = 0;

async function api(path, options = {}) {
  const res = await fetch(`/chat/api/${path}`, {
    ...options,
    headers: { "x-csrf-token": csrf, ...(options.headers ?? {}) },
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.error ?? `HTTP ${res.status}`);
  return body;
}

function status(text) {
  $("status").textContent = text;
}

function busy() {
  status(conv.busy ? "Writing…" : "");
  document.body.classList.toggle("busy", conv.busy);
}

/** Reads the newest page of history with the live state of the same moment, then follows the stream. */
async function load() {
  const page = await api("history");
  source?.close();
  conv.clear();
  $("title").textContent = page.title ?? "Herald";
  conv.history(page.entries);
  firstSeq = page.entries[0]?.seq;
  $("older").hidden = !page.more;
  for (const t of page.running) {
    const view = conv.turn(t.turnId);
    if (!t.committed) view.setUser(t.user.text, t.user.files);
    view.start();
    for (const tool of t.tools) view.addTool(tool.line, tool.callId, tool.ok !== undefined, tool.ok);
    if (t.text) view.delta(t.text);
  }
  for (const p of page.prompts) conv.message(p);
  cursor = page.cursor;
  follow();
  busy();
  scrollDown(true);
}

async function older() {
  if (firstSeq === undefined) return;
  const log = $("log");
  const height = log.scrollHeight;
  const page = await api(`history?before=${firstSeq}`);
  conv.history(page.entries, true);
  firstSeq = page.entries[0]?.seq ?? firstSeq;
  $("older").hidden = !page.more;
  log.scrollTop += log.scrollHeight - height;
}

const handlers = {
  user: (d) => {
    const t = conv.turn(d.turnId);
    t.setUser(d.text, d.files);
    t.start();
  },
  delta: (d) => conv.turn(d.turnId).delta(d.text),
  tool: (d) => conv.turn(d.turnId).addTool(d.line, d.callId, false),
  tool_end: (d) => conv.turn(d.turnId).endTool(d.callId, d.ok, d.durationMs),
  message: (d) => {
    conv.message(d);
    refreshSoon();
  },
  settle: (d) => conv.settle(d),
  ended: (d) => {
    conv.turns.get(d.turnId)?.end();
    refreshSoon();
  },
  session: (d) => sessionChanged(d.changed),
};

function follow() {
  source = new EventSource(`/chat/events?after=${encodeURIComponent(cursor)}`);
  for (const [type, handle] of Object.entries(handlers)) {
    source.addEventListener(type, (e) => {
      const near = nearBottom();
      handle(JSON.parse(e.data));
      busy();
      if (near) scrollDown();
    });
  }
  source.addEventListener("reset", () => {
    source.close();
    load().catch(showError);
  });
  source.onopen = () => status(conv.busy ? "Writing…" : "");
  source.onerror = () => status("Reconnecting…");
}

let refreshTimer;
/** Reads the session list again shortly (a turn ended: its title and counts changed). */
function refreshSoon() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => sessions().catch(showError), 300);
}

async function sessionChanged(changed) {
  await sessions();
  if (changed) await load();
}

function nearBottom() {
  const log = $("log");
  return log.scrollHeight - log.scrollTop - log.clientHeight < 80;
}

function scrollDown(force = false) {
  const log = $("log");
  if (force || nearBottom()) log.scrollTop = log.scrollHeight;
}

function showError(err) {
  status(err instanceof Error ? err.message : String(err));
}

async function send(text, extra = {}) {
  const files = extra.button ? [] : pending.map((p) => p.id);
  if (!text.trim() && files.length === 0) return;
  try {
    await api("send", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text, ...(files.length ? { files } : {}), ...extra }),
    });
    if (!extra.button) {
      pending = [];
      renderPending();
    }
    return true;
  } catch (err) {
    showError(err);
    return false;
  }
}

// The composer: Enter sends, Shift+Enter is a new line, Esc stops the turn; `/` completes commands.
function completions() {
  const v = input.value;
  if (!v.startsWith("/") || /\s/.test(v)) return [];
  const word = v.slice(1).toLowerCase();
  return commands.filter((c) => c.name.toLowerCase().startsWith(word)).slice(0, 8);
}

function renderComplete() {
  const list = $("complete");
  const items = completions();
  list.hidden = items.length === 0;
  picked = Math.min(picked, Math.max(0, items.length - 1));
  list.replaceChildren(
    ...items.map((c, i) =>
      h(
        "li",
        {
          role: "option",
          "aria-selected": i === picked ? "true" : "false",
          onmousedown: (e) => {
            e.preventDefault();
            choose(c);
          },
        },
        h("b", {}, `/${c.name}`),
        " ",
        h("span", {}, c.description),
      ),
    ),
  );
}

function choose(c) {
  input.value = `/${c.name} `;
  picked = 0;
  renderComplete();
  input.focus();
}

function grow() {
  input.style.height = "auto";
  input.style.height = `${Math.min(input.scrollHeight, 200)}px`;
}

input.addEventListener("input", () => {
  picked = 0;
  renderComplete();
  grow();
});

input.addEventListener("keydown", (e) => {
  const items = $("complete").hidden ? [] : completions();
  if (items.length && (e.key === "ArrowDown" || e.key === "ArrowUp")) {
    e.preventDefault();
    picked = (picked + (e.key === "ArrowDown" ? 1 : items.length - 1)) % items.length;
    renderComplete();
  } else if (
    items.length &&
    (e.key === "Tab" || (e.key === "Enter" && !e.shiftKey && input.value !== `/${items[picked].name}`))
  ) {
    e.preventDefault();
    choose(items[picked]);
  } else if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    $("composer").requestSubmit();
  } else if (e.key === "Escape") {
    e.preventDefault();
    if (!$("complete").hidden) $("complete").hidden = true;
    else send("/stop");
  }
});

$("composer").addEventListener("submit", async (e) => {
  e.preventDefault();
  const text = input.value;
  input.value = "";
  grow();
  renderComplete();
  if (!(await send(text))) input.value = text;
});

// Files: uploaded as soon as they are picked, sent with the next message.
function renderPending() {
  $("pending-files").replaceChildren(
    ...pending.map((p) =>
      h(
        "span",
        { class: "chip" },
        p.name,
        h(
          "button",
          {
            type: "button",
            class: "icon",
            "aria-label": `Remove ${p.name}`,
            onclick: () => {
              pending = pending.filter((x) => x !== p);
              renderPending();
            },
          },
          "✕",
        ),
      ),
    ),
  );
}

$("file").addEventListener("change", async (e) => {
  for (const file of e.target.files) {
    status(`Uploading ${file.name}…`);
    try {
      const up = await api("upload", {
        method: "POST",
        headers: {
          "content-type": file.type || "application/octet-stream",
          "x-file-name": encodeURIComponent(file.name),
        },
        body: file,
      });
      pending.push({ id: up.id, name: file.name });
      renderPending();
      status("");
    } catch (err) {
      showError(err);
    }
  }
  e.target.value = "";
});

// Voice notes (when the gateway transcribes them): recorded with MediaRecorder, sent when stopped.
let recorder;
async function record() {
  const button = $("record");
  if (recorder) {
    recorder.stop();
    return;
  }
  let stream;
  try {
    stream = await navigator.mediaDevices.getUserMedia({ audio: true });
  } catch (err) {
    return showError(err);
  }
  const type = ["audio/ogg;codecs=opus", "audio/webm;codecs=opus", "audio/webm"].find((t) =>
    MediaRecorder.isTypeSupported(t),
  );
  recorder = new MediaRecorder(stream, type ? { mimeType: type } : {});
  const chunks = [];
  recorder.addEventListener("dataavailable", (e) => chunks.push(e.data));
  recorder.addEventListener("stop", async () => {
    for (const track of stream.getTracks()) track.stop();
    const blob = new Blob(chunks, { type: recorder.mimeType.split(";")[0] });
    recorder = undefined;
    button.setAttribute("aria-pressed", "false");
    button.classList.remove("on");
    const ext = blob.type.includes("ogg") ? "ogg" : "webm";
    try {
      const up = await api("upload", {
        method: "POST",
        headers: { "content-type": blob.type, "x-file-name": `voice-note.${ext}`, "x-voice-note": "1" },
        body: blob,
      });
      await api("send", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ text: "", files: [up.id] }),
      });
      status("");
    } catch (err) {
      showError(err);
    }
  });
  recorder.start();
  button.setAttribute("aria-pressed", "true");
  button.classList.add("on");
  status("Recording… (● again sends)");
}
if (meta("herald-voice") === "1" && window.MediaRecorder && navigator.mediaDevices) {
  $("record").hidden = false;
  $("record").addEventListener("click", () => record().catch(showError));
}

// Sessions: the list (resume, rename), a new one, and search over all of the user's messages.
async function sessions() {
  const { sessions: list } = await api("sessions");
  const current = list.find((s) => s.current);
  $("title").textContent = current?.title ?? "Herald";
  $("sessions").replaceChildren(
    ...list.map((s) => {
      const name = s.title ?? `Session ${s.n}`;
      const when = new Date(s.lastActiveAt).toLocaleString([], { dateStyle: "short", timeStyle: "short" });
      const open = h(
        "button",
        {
          type: "button",
          class: "session",
          "aria-current": s.current ? "true" : undefined,
          onclick: () => !s.current && send(`/resume ${s.n}`),
        },
        h("span", { class: "name" }, name),
        h("span", { class: "meta" }, `${when} · ${s.messageCount}`),
      );
      const rename = s.current
        ? h(
            "button",
            {
              type: "button",
              class: "icon",
              "aria-label": "Rename this session",
              onclick: () => renameForm(item, name),
            },
            "✎",
          )
        : null;
      const item = h("li", {}, open, rename);
      return item;
    }),
  );
}

function renameForm(item, name) {
  const field = h("input", { value: name, "aria-label": "Session name", maxlength: 80 });
  const form = h(
    "form",
    {
      class: "rename",
      onsubmit: (e) => {
        e.preventDefault();
        if (field.value.trim()) send(`/title ${field.value.trim()}`);
      },
    },
    field,
  );
  item.replaceChildren(form);
  field.focus();
  field.select();
}

let searchTimer;
$("search").addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(search, 250);
});
$("search-form").addEventListener("submit", (e) => {
  e.preventDefault();
  search();
});

async function search() {
  const q = $("search").value.trim();
  $("hits").hidden = !q;
  $("sessions").hidden = Boolean(q);
  if (!q) return;
  const { hits } = await api(`search?q=${encodeURIComponent(q)}`);
  const items = hits.map((hit) => {
    const li = h("li", {});
    const body = h("span", { class: "snippet" });
    body.innerHTML = snippet(hit.snippet);
    const when = h("span", { class: "meta" }, new Date(hit.createdAt).toLocaleDateString());
    li.append(
      hit.n
        ? h(
            "button",
            { type: "button", class: "session", onclick: () => send(`/resume ${hit.n}`) },
            body,
            when,
          )
        : h("div", { class: "session" }, body, when),
    );
    return li;
  });
  $("hits").replaceChildren(...(items.length ? items : [h("li", { class: "muted" }, "No messages match.")]));
}

// The rest of the chrome: new session, the narrow screen's session drawer, invites, logout.
$("new-session").addEventListener("click", () => {
  send("/new");
  document.body.classList.remove("drawer");
});
$("open-sidebar").addEventListener("click", () => document.body.classList.add("drawer"));
$("close-sidebar").addEventListener("click", () => document.body.classList.remove("drawer"));
$("older").addEventListener("click", () => older().catch(showError));
if (meta("herald-owner") === "1") $("invite").hidden = false;
if (meta("herald-logout") === "1") $("logout").hidden = false;
$("invite").addEventListener("click", () => $("invite-dialog").showModal());
$("invite-make").addEventListener("click", async () => {
  const name = $("invite-name").value.trim();
  if (!name) return $("invite-name").reportValidity();
  const { path } = await api("invite", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name }),
  });
  const link = h("input", {
    class: "field",
    readonly: true,
    value: new URL(path, location.href).href,
    "aria-label": "Invite link",
  });
  $("invite-link").replaceChildren("Send this link (valid once):", link);
  link.select();
});
$("logout").addEventListener("click", async () => {
  await fetch("/chat/logout", { method: "POST", headers: { "x-csrf-token": csrf } });
  location.reload();
});

load().catch(showError);
api("commands")
  .then((c) => {
    commands = c.commands;
  })
  .catch(() => undefined);
sessions().catch(showError);
input.focus();
