/**
 * The line mode of `herald chat` (`--plain`, a pipe, a dumb terminal): each line typed is a message; a
 * spinner runs while the model works (on a terminal only), tool progress prints as indented lines,
 * the reply prints as text with its choices numbered. At the end of the input it waits for the answers
 * still due, so `echo question | herald chat` prints the answer.
 */
import { createInterface } from "node:readline";
import { buttonsFallback } from "../../core/buttons.js";
import type { ChatBackend, ChatEvent } from "./types.js";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export interface LineChatOptions {
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
}

/** Runs the line mode until the input ends (or `/exit`) and every answer asked for has come. */
export async function runLineChat(backend: ChatBackend, options: LineChatOptions = {}): Promise<void> {
  const output = options.output ?? process.stdout;
  const input = options.input ?? process.stdin;
  const tty = (output as NodeJS.WriteStream).isTTY === true;
  const pending = new Set<string>();
  let spinner: NodeJS.Timeout | undefined;
  let frame = 0;
  let inputEnded = false;
  let finish: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const clearLine = () => {
    if (tty) output.write("\r\x1b[K");
  };
  const stopSpinner = () => {
    if (!spinner) return;
    clearInterval(spinner);
    spinner = undefined;
    clearLine();
  };
  const startSpinner = () => {
    if (!tty || spinner) return;
    spinner = setInterval(() => {
      clearLine();
      output.write(`${FRAMES[frame++ % FRAMES.length]} thinking…`);
    }, 80);
  };
  const settle = (id: string | undefined) => {
    if (id !== undefined) pending.delete(id);
    if (pending.size === 0) stopSpinner();
    if (inputEnded && pending.size === 0) finish();
  };

  const unsubscribe = backend.onEvent((event: ChatEvent) => {
    if (event.type === "tool") {
      clearLine();
      output.write(`  ${event.line}\n`);
    } else if (event.type === "reply") {
      stopSpinner();
      const choices = buttonsFallback(event.buttons, event.text);
      output.write(`\n${event.text}${choices ? `\n\n${choices}` : ""}\n`);
      if (event.kind === "notice") startSpinner();
      else {
        output.write("> ");
        settle(event.id);
      }
    } else if (event.type === "ended") settle(event.id);
  });

  output.write("Herald — type a message, /help for commands, Ctrl-D to quit.\n> ");
  const rl = createInterface({ input, terminal: false });
  rl.on("line", (line) => {
    const text = line.trim();
    if (!text) return void output.write("> ");
    if (text === "/exit" || text === "/quit") {
      pending.clear();
      return void rl.close();
    }
    startSpinner();
    pending.add(backend.submit(text));
  });
  rl.on("close", () => {
    inputEnded = true;
    // Ctrl-D on a terminal ends at once; a pipe's end waits for the answers it asked for.
    if ((input as NodeJS.ReadStream).isTTY) pending.clear();
    settle(undefined);
  });
  await finished;
  unsubscribe();
  stopSpinner();
}
