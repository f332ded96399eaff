// The conversation view: one block per turn (the user's message, tool lines, the reply), built the
// same way from the history, from the turns still running when the page opened, and from live events.
// Every step is idempotent but the streamed text, which the event numbers keep in order and once.
import { esc, fileList, h, markdown, mdBlock } from "./render.js";

export class Conversation {
  constructor(root, onButton) {
    this.root = root;
    this.onButton = onButton;
    this.turns = new Map();
    this.prompts = new Map();
  }

  clear() {
    this.root.replaceChildren();
    this.turns.clear();
    this.prompts.clear();
  }

  /** The block of turn `turnId` (made at the end, or in `into` for older history). */
  turn(turnId, into) {
    let t = this.turns.get(turnId);
    if (t) return t;
    t = new TurnView(turnId, this);
    this.turns.set(turnId, t);
    (into ?? this.root).append(t.el);
    return t;
  }

  /** Renders history entries (oldest first); `prepend` puts them before what is shown. */
  history(entries, prepend = false) {
    const frag = document.createDocumentFragment();
    let loose;
    for (const e of entries) {
      let t;
      if (e.turnId) t = this.turn(e.turnId, frag);
      else {
        loose ??= new TurnView(undefined, this);
        frag.append(loose.el);
        t = loose;
      }
      if (e.role === "user") t.setUser(e.text);
      else if (e.role === "assistant") t.addText(e.text);
      else t.addTool(e.text, undefined, true);
    }
    if (prepend) this.root.prepend(frag);
    else this.root.append(frag);
  }

  /** A message event (reply, notice, error), with its buttons and files. */
  message(m) {
    const t = m.turnId ? this.turn(m.turnId) : this.loose();
    t.message(m);
  }

  loose() {
    const t = new TurnView(undefined, this);
    this.root.append(t.el);
    return t;
  }

  settle(s) {
    const el = this.prompts.get(s.id);
    if (!el) return;
    el.querySelector(".buttons")?.remove();
    el.querySelector(".md")?.replaceWith(mdBlock(s.text));
    this.prompts.delete(s.id);
  }

  /** Whether any turn is still being written. */
  get busy() {
    for (const t of this.turns.values()) if (t.running) return true;
    return false;
  }
}

class TurnView {
  constructor(turnId, conv) {
    this.conv = conv;
    this.turnId = turnId;
    this.el = h("section", { class: "turn", "data-turn": turnId });
    this.user = undefined;
    this.tools = new Map();
    this.toolsEl = undefined;
    this.stream = undefined;
    this.streamText = "";
    this.texts = [];
    this.running = false;
  }

  setUser(text, files) {
    if (this.user) return;
    this.user = h(
      "div",
      { class: "msg user" },
      h("div", { class: "bubble" }, mdBlock(text), fileList(files)),
    );
    this.el.prepend(this.user);
  }

  start() {
    this.running = true;
    this.el.classList.add("running");
  }

  end() {
    this.running = false;
    this.el.classList.remove("running");
    this.stream?.classList.remove("streaming");
  }

  toolList() {
    if (!this.toolsEl) {
      this.toolsEl = h("ul", { class: "tools", "aria-label": "Tool progress" });
      if (this.stream) this.stream.before(this.toolsEl);
      else this.el.append(this.toolsEl);
    }
    return this.toolsEl;
  }

  addTool(line, callId, done, ok) {
    const li = h("li", { class: done ? (ok === false ? "tool failed" : "tool done") : "tool" }, line);
    if (callId) this.tools.set(callId, li);
    this.toolList().append(li);
  }

  endTool(callId, ok, durationMs) {
    const li = this.tools.get(callId);
    if (!li) return;
    li.className = ok ? "tool done" : "tool failed";
    li.title = `${ok ? "done" : "failed"} in ${(durationMs / 1000).toFixed(1)} s`;
  }

  /** Text streamed so far (a page opened mid-turn) or one more piece of it. */
  delta(text) {
    if (!this.stream) {
      this.stream = h("div", { class: "msg bot streaming" }, h("div", { class: "bubble md" }));
      this.el.append(this.stream);
    }
    this.streamText += text;
    this.stream.firstChild.innerHTML = markdown(this.streamText);
  }

  /** A whole assistant text from the history. */
  addText(text) {
    this.texts.push(text);
    this.el.append(h("div", { class: "msg bot" }, h("div", { class: "bubble" }, mdBlock(text))));
  }

  message(m) {
    if (m.kind === "reply" && this.texts.includes(m.text) && !this.stream) {
      // The history showed this reply already (committed before the page read it): only what it lacks.
      if (m.buttons || m.files) this.extras(this.el.lastElementChild, m);
      this.end();
      return;
    }
    const cls = m.kind === "reply" ? "msg bot" : `msg ${m.kind}`;
    const bubble = h("div", { class: "bubble" }, mdBlock(m.text));
    const el = h("div", { class: cls, "data-message": m.id }, bubble);
    if (m.kind === "reply" && this.stream) {
      this.stream.replaceWith(el);
      this.stream = undefined;
      this.streamText = "";
    } else this.el.append(el);
    if (m.kind === "reply") this.texts.push(m.text);
    this.extras(el, m);
    if (m.kind !== "notice") this.end();
  }

  extras(el, m) {
    if (!el) return;
    const bubble = el.querySelector(".bubble") ?? el;
    const files = fileList(m.files);
    if (files) bubble.append(files);
    if (!m.buttons?.length) return;
    el.dataset.prompt = m.id;
    this.conv.prompts.set(m.id, el);
    const rows = m.buttons.map((row) =>
      h(
        "div",
        { class: "button-row" },
        row.map((b) =>
          h(
            "button",
            { type: "button", class: "choice", onclick: () => this.conv.onButton(m.id, b) },
            b.label,
          ),
        ),
      ),
    );
    bubble.append(h("div", { class: "buttons" }, rows));
  }
}

export { esc };
