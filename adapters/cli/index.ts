/**
 * The terminal as a platform (`herald chat`): each line you type is a message in one local session;
 * a spinner runs while the model works, tool progress prints as lines, the reply prints as text.
 */
import { userInfo } from "node:os";
import { createInterface, type Interface } from "node:readline";
import type {
  AdapterTurnEvent,
  ChatRef,
  InboundHandler,
  OutboundMessage,
  PlatformAdapter,
  SendResult,
} from "../../core/types.js";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export interface CliAdapterOptions {
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  /** The session's chat id; one per terminal user by default. */
  chatId?: string;
}

export class CliAdapter implements PlatformAdapter {
  readonly platform = "cli";
  private rl: Interface | undefined;
  private spinner: NodeJS.Timeout | undefined;
  private frame = 0;
  private counter = 0;
  private readonly output: NodeJS.WritableStream;
  private readonly user = userInfo().username;
  private closed: (() => void) | undefined;
  /** Resolves when the user ends the conversation (Ctrl-D, /exit). */
  readonly finished: Promise<void>;

  constructor(private readonly options: CliAdapterOptions = {}) {
    this.output = options.output ?? process.stdout;
    this.finished = new Promise((resolve) => {
      this.closed = resolve;
    });
  }

  async start(onMessage: InboundHandler): Promise<void> {
    const chat: ChatRef = { platform: "cli", chatId: this.options.chatId ?? this.user };
    this.rl = createInterface({
      input: this.options.input ?? process.stdin,
      output: this.output,
      terminal: false,
    });
    this.output.write("Herald — type a message, /help for commands, Ctrl-D to quit.\n> ");
    this.rl.on("line", (line) => {
      const text = line.trim();
      if (!text) return void this.output.write("> ");
      if (text === "/exit" || text === "/quit") return void this.rl?.close();
      this.startSpinner();
      void onMessage({
        platform: "cli",
        messageId: `${Date.now()}-${++this.counter}`,
        chat,
        chatType: "dm",
        sender: { id: this.user, name: this.user },
        text,
        mentioned: true,
      });
    });
    this.rl.on("close", () => this.closed?.());
  }

  async stop(): Promise<void> {
    this.stopSpinner();
    this.rl?.close();
  }

  async send(_chat: ChatRef, message: OutboundMessage): Promise<SendResult> {
    this.stopSpinner();
    this.output.write(`\n${message.text}\n`);
    if (message.kind !== "notice") this.output.write("> ");
    return { messageIds: [String(++this.counter)] };
  }

  onTurnEvent(_chat: ChatRef, event: AdapterTurnEvent): void {
    if (event.type !== "tool") return;
    this.clearLine();
    this.output.write(`  ${event.line}\n`);
  }

  private startSpinner(): void {
    if (!(this.output as NodeJS.WriteStream).isTTY) return;
    this.stopSpinner();
    this.spinner = setInterval(() => {
      this.clearLine();
      this.output.write(`${FRAMES[this.frame++ % FRAMES.length]} thinking…`);
    }, 80);
  }

  private stopSpinner(): void {
    if (!this.spinner) return;
    clearInterval(this.spinner);
    this.spinner = undefined;
    this.clearLine();
  }

  private clearLine(): void {
    if ((this.output as NodeJS.WriteStream).isTTY) this.output.write("\r\x1b[K");
  }
}

/** Builds the terminal adapter. */
export function createCliAdapter(options: CliAdapterOptions = {}): CliAdapter {
  return new CliAdapter(options);
}
