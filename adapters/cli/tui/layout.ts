/**
 * One frame of the UI from its state: the transcript pane, a rule, the input, the menu under it and
 * the status line, `rows - 1` lines in all (Ink redraws the whole screen each frame once its output
 * reaches the last row), and where the cursor goes.
 */
import stringWidth from "string-width";
import type { ChatStatus } from "../../shared/chat-port.js";
import type { ChatModel } from "./model.js";
import type { Theme } from "./theme.js";
import { clip, type RenderContext } from "./transcript.js";

/** A frame: its lines and the cursor (column, row). */
export interface Frame {
  lines: string[];
  cursor: { x: number; y: number };
}

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const INPUT_ROWS_MAX = 8;
const MENU_ROWS_MAX = 6;
const PROMPT = "› ";

/** Lays out the model at its size. */
export function layoutFrame(model: ChatModel, ctx: RenderContext): Frame {
  const width = Math.max(20, model.columns);
  const height = Math.max(6, model.rows - 1);
  const { theme } = ctx;

  const input = inputLines(model, width, theme);
  const menu = menuLines(model, width, theme);
  const status = statusLine(model, width, theme);
  const paneHeight = Math.max(1, height - input.lines.length - menu.length - 2);
  const pane = model.transcript.window(width, paneHeight, model.scroll, ctx);
  model.scroll = pane.below;
  const padding = Array<string>(paneHeight - pane.lines.length).fill("");
  const rule = ruleLine(width, pane.above, pane.below, theme);
  const inputTop = paneHeight + 1;
  return {
    lines: [...padding, ...pane.lines, rule, ...input.lines, ...menu, status],
    cursor: { x: input.cursor.x, y: inputTop + input.cursor.y },
  };
}

function ruleLine(width: number, above: number, below: number, theme: Theme): string {
  const note = below > 0 ? ` ↓ ${below} more (PgDn, Esc) ` : above > 0 ? " PgUp scrolls " : "";
  return theme.dim(
    note ? `──${note}${"─".repeat(Math.max(0, width - 2 - stringWidth(note)))}` : "─".repeat(width),
  );
}

function inputLines(model: ChatModel, width: number, theme: Theme) {
  const { editor } = model;
  if (!editor.text) {
    const placeholder = model.openPrompt()
      ? "Pick a choice below, or write an answer"
      : model.busy
        ? "Working… type to send another message; Ctrl+C stops"
        : "Write a message · / commands · @ files · Ctrl+D quits";
    return {
      lines: [theme.accent(PROMPT) + theme.dim(clip(placeholder, width - 3))],
      cursor: { x: 2, y: 0 },
    };
  }
  const layout = editor.layout(width - PROMPT.length - 1);
  const first = Math.max(
    0,
    Math.min(layout.cursor.row - INPUT_ROWS_MAX + 1, layout.lines.length - INPUT_ROWS_MAX),
  );
  const shown = layout.lines.slice(first, first + INPUT_ROWS_MAX);
  return {
    lines: shown.map((l, i) => (i === 0 && first === 0 ? theme.accent(PROMPT) : "  ") + l),
    cursor: { x: PROMPT.length + layout.cursor.col, y: layout.cursor.row - first },
  };
}

function menuLines(model: ChatModel, width: number, theme: Theme): string[] {
  const menu = model.menu;
  let items: { label: string; hint?: string | undefined }[];
  let selected: number;
  let title: string | undefined;
  if (menu?.kind === "complete") {
    items = menu.items;
    selected = menu.selected;
  } else if (menu?.kind === "sessions") {
    items = menu.items.map((s) => ({
      label: `${s.n}. ${s.title ?? "(untitled)"}`,
      hint: `${new Date(s.lastActiveAt).toISOString().slice(0, 16).replace("T", " ")} · ${s.messageCount} msgs${s.current ? " · current" : ""}`,
    }));
    selected = menu.selected;
    title = "Reopen which session? ↑/↓ · Enter · Esc";
  } else {
    const prompt = model.editor.text ? undefined : model.openPrompt();
    if (!prompt) return [];
    items = prompt.buttons.flat().map((b, i) => ({ label: `${i + 1}. ${b.label}` }));
    selected = Math.min(model.choice, items.length - 1);
    title = "↑/↓ and Enter, or the number; or type an answer";
  }
  const rows = Math.min(MENU_ROWS_MAX, items.length);
  const first = Math.max(0, Math.min(selected - rows + 1, items.length - rows));
  const lines = items.slice(first, first + rows).map((item, i) => {
    const chosen = first + i === selected;
    const label = clip(item.label, Math.max(8, Math.floor(width / 2)));
    const hint = item.hint ? clip(item.hint, Math.max(0, width - stringWidth(label) - 6)) : "";
    const text = `${chosen ? "›" : " "} ${label}`;
    return (chosen ? theme.inverse(text) : text) + (hint ? `  ${theme.dim(hint)}` : "");
  });
  return title ? [theme.dim(clip(title, width)), ...lines] : lines;
}

function statusLine(model: ChatModel, width: number, theme: Theme): string {
  const state = model.hint
    ? theme.warn(model.hint)
    : model.busy
      ? `${theme.accent(SPINNER[model.spinnerFrame % SPINNER.length]!)} working`
      : theme.ok("●") + " ready";
  const right =
    model.backend.where === "embedded"
      ? model.backend.chatName
      : `${model.backend.chatName} @ ${model.backend.where}`;
  const facts = model.status ? figures(model.status) : "";
  const left = `${state}${facts ? ` ${theme.dim("│")} ${facts}` : ""}`;
  const room = width - stringWidth(left) - 1;
  if (room < 8) return clipStyled(left, width);
  const where = clip(right, room);
  return `${left}${" ".repeat(Math.max(1, width - stringWidth(left) - stringWidth(where)))}${theme.dim(where)}`;
}

/** "fake-model · 1.2k tok · $0.01 · ctx 3% · 2 waiting". */
function figures(status: ChatStatus): string {
  const tokens = status.usage.promptTokens + status.usage.completionTokens;
  const parts = [status.model, `${compact(tokens)} tok`];
  if (status.usage.costUsd !== undefined)
    parts.push(`$${status.usage.costUsd.toFixed(status.usage.costUsd < 1 ? 3 : 2)}`);
  if (status.context.windowTokens > 0)
    parts.push(
      `ctx ${Math.min(100, Math.round((100 * status.context.usedTokens) / status.context.windowTokens))}%`,
    );
  if (status.turns.waiting > 0) parts.push(`${status.turns.waiting} waiting`);
  if (status.queue.workers > 1) parts.push(`${status.queue.workers} workers`);
  return parts.join(" · ");
}

function compact(n: number): string {
  return n < 1000
    ? String(n)
    : n < 1_000_000
      ? `${(n / 1000).toFixed(1)}k`
      : `${(n / 1_000_000).toFixed(1)}M`;
}

/** Styled text cut to `width` columns (the styles are dropped when it must be cut). */
function clipStyled(text: string, width: number): string {
  if (stringWidth(text) <= width) return text;
  return clip(text.replace(/\x1b\[[0-9;]*m/g, ""), width);
}
