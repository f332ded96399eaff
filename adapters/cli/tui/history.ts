/**
 * What was typed before, for ↑ and ↓: kept in a file (`HERALD_HOME/chat_history`, one JSON string a
 * line, the last 500) so it outlives the process. A file that cannot be read or written only means
 * no history across runs.
 */
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";

const KEPT = 500;

/** The input history and a position in it while browsing. */
export class InputHistory {
  private items: string[] = [];
  /** How far back the browsing is (0: not browsing) and the draft it left. */
  private back = 0;
  private draft = "";

  constructor(private readonly file?: string | undefined) {
    if (!file) return;
    try {
      this.items = readFileSync(file, "utf8")
        .split("\n")
        .filter(Boolean)
        .flatMap((line) => {
          try {
            const item = JSON.parse(line) as unknown;
            return typeof item === "string" ? [item] : [];
          } catch {
            return [];
          }
        })
        .slice(-KEPT);
    } catch {
      this.items = [];
    }
  }

  /** Records a sent message (not a repeat of the last one) and stops browsing. */
  add(text: string): void {
    this.back = 0;
    if (!text.trim() || this.items.at(-1) === text) return;
    this.items.push(text);
    if (!this.file) return;
    try {
      if (this.items.length > KEPT * 2) {
        this.items = this.items.slice(-KEPT);
        writeFileSync(this.file, this.items.map((i) => `${JSON.stringify(i)}\n`).join(""), { mode: 0o600 });
      } else appendFileSync(this.file, `${JSON.stringify(text)}\n`, { mode: 0o600 });
    } catch {
      // No history across runs; this run keeps it.
    }
  }

  /** The older entry (↑), keeping `current` as the draft when browsing starts; undefined at the oldest. */
  older(current: string): string | undefined {
    if (this.back >= this.items.length) return undefined;
    if (this.back === 0) this.draft = current;
    this.back++;
    return this.items[this.items.length - this.back];
  }

  /** The newer entry (↓), the draft past the newest; undefined when not browsing. */
  newer(): string | undefined {
    if (this.back === 0) return undefined;
    this.back--;
    return this.back === 0 ? this.draft : this.items[this.items.length - this.back];
  }
}
