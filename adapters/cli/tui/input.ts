/**
 * What each key does. Enter sends; Alt+Enter, Ctrl+J or a `\` before Enter start a new line; ↑/↓
 * browse what was sent before (or move in a menu); Tab and Enter take a completion; Esc clears;
 * Ctrl+C stops the turn (twice leaves); Ctrl+D on an empty input leaves; PgUp/PgDn scroll; Ctrl+O
 * shows or hides the output of tool calls; Ctrl+L redraws. A prompt's choices take ↑/↓ and Enter, or
 * their number, while the input is empty.
 */
import { complete } from "./complete.js";
import type { Key } from "./keys.js";
import type { ChatModel } from "./model.js";

/** What the screen must do besides drawing the change. */
export type KeyOutcome = "redraw" | undefined;

/** Applies one key to the model. */
export function handleKey(model: ChatModel, key: Key): KeyOutcome {
  const outcome = apply(model, key);
  model.changed(true);
  return outcome;
}

function apply(model: ChatModel, key: Key): KeyOutcome {
  const { editor } = model;
  if (key.ctrl) {
    switch (key.name) {
      case "c":
        return void model.interrupt();
      case "d":
        if (!editor.text) return void model.exit();
        editor.deleteForward();
        return edited(model);
      case "l":
        return "redraw";
      case "o":
        model.expanded = !model.expanded;
        return;
      case "a":
        return void editor.home();
      case "e":
        return void editor.end();
      case "w":
        editor.deleteWordBack();
        return edited(model);
      case "u":
        editor.killToStart();
        return edited(model);
      case "k":
        editor.killToEnd();
        return edited(model);
      case "left":
        return void editor.wordLeft();
      case "right":
        return void editor.wordRight();
    }
  }
  if (menuKey(model, key)) return;
  switch (key.name) {
    case "text":
    case "paste":
      if (key.meta && key.text === "b") return void editor.wordLeft();
      if (key.meta && key.text === "f") return void editor.wordRight();
      editor.insert((key.text ?? "").replace(/\t/g, "  "));
      return edited(model);
    case "return":
      if (key.meta || key.shift) editor.insert("\n");
      else if (editor.text.slice(0, editor.cursor).endsWith("\\") && editor.cursor === editor.text.length) {
        editor.backspace();
        editor.insert("\n");
      } else model.submit();
      return edited(model);
    case "enter":
      editor.insert("\n");
      return edited(model);
    case "backspace":
      if (key.meta) editor.deleteWordBack();
      else editor.backspace();
      return edited(model);
    case "delete":
      editor.deleteForward();
      return edited(model);
    case "left":
      return void (key.meta ? editor.wordLeft() : editor.left());
    case "right":
      return void (key.meta ? editor.wordRight() : editor.right());
    case "home":
      return void editor.home();
    case "end":
      return void editor.end();
    case "up":
      if (!editor.onFirstLine()) return void editor.vertical(-1);
      return browse(model, model.history.older(editor.text));
    case "down":
      if (!editor.onLastLine()) return void editor.vertical(1);
      return browse(model, model.history.newer());
    case "pageup":
      model.scroll += page(model);
      return;
    case "pagedown":
      model.scroll = Math.max(0, model.scroll - page(model));
      return;
    case "escape":
      if (model.menu) model.menu = undefined;
      else if (editor.text) editor.clear();
      else model.scroll = 0;
      return;
    case "tab":
      return edited(model);
  }
  return undefined;
}

/** Keys a menu takes: moving in it, taking an item, closing it. True when the key was taken. */
function menuKey(model: ChatModel, key: Key): boolean {
  const menu = model.menu;
  const prompt = !menu && !model.editor.text ? model.openPrompt() : undefined;
  const count = menu ? menu.items.length : (prompt?.buttons.flat().length ?? 0);
  if (count === 0) return false;
  const move = (delta: number) => {
    if (menu) menu.selected = (menu.selected + delta + count) % count;
    else model.choice = (model.choice + delta + count) % count;
  };
  if ((key.name === "up" || key.name === "down") && !key.meta) {
    move(key.name === "up" ? -1 : 1);
    return true;
  }
  if (prompt && key.name === "text" && /^[1-9]$/.test(key.text ?? "") && Number(key.text) <= count) {
    model.choose(Number(key.text) - 1);
    return true;
  }
  const take = key.name === "tab" || (key.name === "return" && !key.meta && !key.shift);
  if (!take) return false;
  if (prompt) {
    model.choose(Math.min(model.choice, count - 1));
    return true;
  }
  if (menu?.kind === "sessions") {
    const picked = menu.items[menu.selected];
    if (picked) model.resume(picked.n);
    return true;
  }
  if (menu?.kind === "complete") {
    const item = menu.items[menu.selected];
    if (!item) return false;
    const { editor } = model;
    const replaced = editor.text.slice(0, menu.from) + item.insert + editor.text.slice(editor.cursor);
    // Enter on a command already written in full sends it.
    if (key.name === "return" && replaced.trimEnd() === editor.text.trimEnd()) return false;
    editor.set(replaced);
    edited(model);
    return true;
  }
  return false;
}

/** After an edit: the completions of the word at the cursor (a sessions menu closes). */
function edited(model: ChatModel): KeyOutcome {
  const { editor } = model;
  const found = complete(editor.text, editor.cursor, model.commands, model.root);
  if (found && found.items.length > 0) {
    const selected =
      model.menu?.kind === "complete" ? Math.min(model.menu.selected, found.items.length - 1) : 0;
    model.menu = { kind: "complete", from: found.from, items: found.items, selected };
  } else model.menu = undefined;
  return undefined;
}

function browse(model: ChatModel, text: string | undefined): KeyOutcome {
  if (text === undefined) return undefined;
  model.editor.set(text);
  model.menu = undefined;
  return undefined;
}

function page(model: ChatModel): number {
  return Math.max(1, model.rows - 8);
}
