/**
 * The full-screen terminal UI of `herald chat`, built on Ink: the alternate screen with bracketed
 * paste, raw keys read here (keys.ts, without Ink's input hook, so Escape needs no timeout), the model
 * and its view. Loaded only when `herald chat` opens it; the gateway never imports it.
 */
import { render } from "ink";
import { createElement as h } from "react";
import type { ChatBackend } from "../types.js";
import { createHighlighter, loadHighlighting } from "./highlight.js";
import { InputHistory } from "./history.js";
import { handleKey } from "./input.js";
import { KeyParser, looksPasted } from "./keys.js";
import { ChatModel } from "./model.js";
import { colorWanted, createTheme } from "./theme.js";
import type { RenderContext } from "./transcript.js";
import { ChatView } from "./view.js";

export interface TuiOptions {
  /** The input history's file. @defaultValue none (this run only) */
  historyFile?: string | undefined;
  /** Where `@path` finds files. @defaultValue process.cwd() */
  root?: string | undefined;
  stdin?: NodeJS.ReadStream;
  stdout?: NodeJS.WriteStream;
  /** @defaultValue colorWanted() (`NO_COLOR`, `TERM=dumb`) */
  color?: boolean | undefined;
  /** Called after each frame is laid out, with how long it took (the benchmark). */
  onFrame?: ((ms: number) => void) | undefined;
  /** Use the alternate screen (a test writing into a buffer does not). @defaultValue true */
  alternateScreen?: boolean | undefined;
}

const ENTER = "\x1b[?1049h\x1b[H\x1b[2J\x1b[?2004h";
const LEAVE = "\x1b[?2004l\x1b[?25h\x1b[?1049l";

/** Runs the UI on `backend` until the user leaves. */
export async function runTui(backend: ChatBackend, options: TuiOptions = {}): Promise<void> {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const theme = createTheme(options.color ?? colorWanted());
  const ctx: RenderContext = { theme, highlight: createHighlighter(theme), expanded: false };
  const alternate = options.alternateScreen ?? true;
  let leave: () => void = () => {};
  const left = new Promise<void>((resolve) => {
    leave = resolve;
  });
  const model = new ChatModel({
    backend,
    history: new InputHistory(options.historyFile),
    root: options.root ?? process.cwd(),
    columns: stdout.columns || 80,
    rows: stdout.rows || 24,
    onExit: () => leave(),
  });

  const restore = () => {
    if (alternate) stdout.write(LEAVE);
  };
  if (alternate) stdout.write(ENTER);
  process.once("exit", restore);
  // A resize redraws everything at the new size (before Ink's own handler, which then finds it done).
  const onResize = () => {
    instance.clear();
    if (alternate) stdout.write("\x1b[H\x1b[2J");
    model.columns = stdout.columns || model.columns;
    model.rows = stdout.rows || model.rows;
    model.changed(true);
  };
  stdout.on("resize", onResize);
  const instance = render(h(ChatView, { model, ctx, onFrame: options.onFrame }), {
    stdout,
    stdin,
    exitOnCtrlC: false,
    patchConsole: false,
    incrementalRendering: false,
  });

  const parser = new KeyParser();
  const onData = (data: Buffer | string) => {
    const chunk = data.toString();
    const keys = looksPasted(chunk)
      ? [{ name: "paste", text: chunk.replace(/\r\n?/g, "\n") }]
      : parser.feed(chunk);
    for (const key of keys) {
      if (handleKey(model, key) === "redraw") {
        instance.clear();
        if (alternate) stdout.write("\x1b[H\x1b[2J");
        model.changed(true);
      }
    }
  };
  if (stdin.isTTY) stdin.setRawMode(true);
  stdin.on("data", onData);
  stdin.resume();
  const stopSignals = ["SIGTERM", "SIGHUP"].map((signal) => {
    const handler = () => model.exit();
    process.once(signal, handler);
    return () => process.off(signal, handler);
  });

  const unsubscribe = await model.open(
    backend.where === "embedded"
      ? "Herald — /help lists commands, Ctrl+C stops a turn, Ctrl+D quits."
      : `Herald at ${backend.where} — /help lists commands, Ctrl+C stops a turn, Ctrl+D quits.`,
  );
  void loadHighlighting().then((ready) => {
    if (!ready) return;
    model.transcript.invalidate();
    model.changed();
  });

  await left;
  unsubscribe();
  stdin.off("data", onData);
  if (stdin.isTTY) stdin.setRawMode(false);
  stdin.pause();
  stdout.off("resize", onResize);
  for (const stop of stopSignals) stop();
  instance.unmount();
  await instance.waitUntilExit().catch(() => undefined);
  restore();
  process.off("exit", restore);
}
