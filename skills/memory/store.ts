/**
 * `FileMemoryStore`: the two memory files under `HERALD_HOME/memories/`, entries separated by a line
 * holding only `§`. Each file has a character budget; a write that would pass it is refused with a
 * message asking the model to consolidate. Writes are serialised and atomic (see `withFileLock`,
 * `writeFileAtomic`), and every entry passes the content checks before it is stored and again before
 * it enters a prompt (the files can be edited by hand).
 */
import { existsSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../../core/logger.js";
import { withFileLock, writeFileAtomic } from "./atomic.js";
import { checkContent } from "./guard.js";
import type { MemoryFiles, MemoryTarget, MemoryView, MemoryWriteResult } from "./types.js";

/** Between two entries in a file (and in the prompt). */
export const ENTRY_DELIMITER = "\n§\n";

const FILE_NAMES: Record<MemoryTarget, string> = { memory: "MEMORY.md", user: "USER.md" };

export interface FileMemoryStoreOptions {
  /** `HERALD_HOME/memories`. */
  dir: string;
  /** Budget of MEMORY.md in characters. @defaultValue 2200 */
  memoryChars?: number | undefined;
  /** Budget of USER.md in characters. @defaultValue 1375 */
  userChars?: number | undefined;
  /** Told about entries left out of a prompt because they failed the content checks. */
  logger?: Logger | undefined;
}

/** Splits a file's text into entries (blank ones dropped). */
export function parseEntries(text: string): string[] {
  return text
    .replace(/\r\n/g, "\n")
    .split(/^§[ \t]*$/m)
    .map((e) => e.trim())
    .filter(Boolean);
}

function usedChars(entries: readonly string[]): number {
  return entries.join(ENTRY_DELIMITER).length;
}

/** The memory files on disk. */
export class FileMemoryStore implements MemoryFiles {
  readonly dir: string;
  readonly #limits: Record<MemoryTarget, number>;
  readonly #logger: Logger | undefined;

  constructor(options: FileMemoryStoreOptions) {
    this.dir = options.dir;
    this.#limits = { memory: options.memoryChars ?? 2200, user: options.userChars ?? 1375 };
    this.#logger = options.logger;
  }

  /** The file of `target`. */
  path(target: MemoryTarget): string {
    return join(this.dir, FILE_NAMES[target]);
  }

  async read(target: MemoryTarget): Promise<MemoryView> {
    const text = await readFile(this.path(target), "utf8").catch((err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return "";
      throw err;
    });
    return this.#view(target, parseEntries(text));
  }

  /** `read` without awaiting (the prompt builder runs inside a synchronous transaction). */
  readSync(target: MemoryTarget): MemoryView {
    const file = this.path(target);
    return this.#view(target, existsSync(file) ? parseEntries(readFileSync(file, "utf8")) : []);
  }

  add(target: MemoryTarget, content: string): Promise<MemoryWriteResult> {
    return this.#write(target, (entries) => {
      const entry = content.trim();
      const invalid = validateEntry(entry);
      if (invalid) return { error: invalid };
      if (entries.includes(entry))
        return { entries, message: "This entry is already saved; nothing changed." };
      return { entries: [...entries, entry], message: "Saved." };
    });
  }

  replace(target: MemoryTarget, oldText: string, content: string): Promise<MemoryWriteResult> {
    return this.#write(target, (entries) => {
      const entry = content.trim();
      const invalid = validateEntry(entry);
      if (invalid) return { error: invalid };
      const found = findUnique(entries, oldText, FILE_NAMES[target]);
      if ("error" in found) return found;
      const next = entries.map((e, i) => (i === found.index ? entry : e));
      return { entries: [...new Set(next)], message: "Replaced." };
    });
  }

  remove(target: MemoryTarget, oldText: string): Promise<MemoryWriteResult> {
    return this.#write(target, (entries) => {
      const found = findUnique(entries, oldText, FILE_NAMES[target]);
      if ("error" in found) return found;
      return { entries: entries.filter((_, i) => i !== found.index), message: "Removed." };
    });
  }

  /**
   * The prompt sections of the memory as it is now (empty files give no section). Entries that fail
   * the content checks are left out and logged.
   */
  promptSections(): string[] {
    const sections: string[] = [];
    const titles: Record<MemoryTarget, string> = {
      memory: "Your memory (notes you saved about your environment and lessons learned)",
      user: "What you know about the user",
    };
    for (const target of ["memory", "user"] as const) {
      const view = this.readSync(target);
      const entries = view.entries.filter((entry) => {
        const refusal = checkContent(entry);
        if (refusal)
          this.#logger?.warn({ file: this.path(target), refusal }, "memory entry left out of the prompt");
        return !refusal;
      });
      if (entries.length === 0) continue;
      const chars = `${view.usedChars.toLocaleString("en-US")}/${view.limitChars.toLocaleString("en-US")} chars`;
      sections.push(`## ${titles[target]} [${chars}]\n${entries.join(ENTRY_DELIMITER)}`);
    }
    return sections;
  }

  #view(target: MemoryTarget, entries: string[]): MemoryView {
    return { target, entries, usedChars: usedChars(entries), limitChars: this.#limits[target] };
  }

  /** Reads the file under the lock, applies `change`, checks the budget and writes atomically. */
  #write(
    target: MemoryTarget,
    change: (entries: string[]) => { entries: string[]; message: string } | { error: string },
  ): Promise<MemoryWriteResult> {
    const file = this.path(target);
    return withFileLock(file, async () => {
      const current = await this.read(target);
      const changed = change(current.entries);
      if ("error" in changed) return { ok: false, error: changed.error, view: current };
      const next = this.#view(target, changed.entries);
      if (next.usedChars > next.limitChars && next.usedChars > current.usedChars) {
        return {
          ok: false,
          view: current,
          error: `refused: ${FILE_NAMES[target]} would hold ${next.usedChars.toLocaleString("en-US")} of its ${next.limitChars.toLocaleString("en-US")} characters (now ${current.usedChars.toLocaleString("en-US")}). Consolidate first: merge related entries into one shorter entry with "replace", or "remove" entries that no longer matter, then try again with a shorter text.`,
        };
      }
      if (next.entries.join("\u0000") !== current.entries.join("\u0000")) {
        await writeFileAtomic(file, next.entries.length ? `${next.entries.join(ENTRY_DELIMITER)}\n` : "");
      }
      return { ok: true, message: changed.message, view: next };
    });
  }
}

function validateEntry(entry: string): string | undefined {
  if (!entry) return "refused: the content is empty. Give the text of the entry.";
  if (/^§[ \t]*$/m.test(entry))
    return "refused: a line holding only '§' separates entries; leave it out of the content.";
  return checkContent(entry);
}

/** The index of the one entry containing `oldText`, or an error the model can act on. */
function findUnique(
  entries: readonly string[],
  oldText: string,
  fileName: string,
): { index: number } | { error: string } {
  const needle = oldText.trim();
  if (!needle) return { error: "refused: old_text is empty. Quote part of the entry you mean." };
  const hits = entries.flatMap((e, i) => (e.includes(needle) ? [i] : []));
  if (hits.length === 1) return { index: hits[0]! };
  if (hits.length === 0)
    return {
      error: `no entry of ${fileName} contains "${needle}". Quote a piece of the entry exactly as it is written.`,
    };
  return {
    error: `"${needle}" appears in ${hits.length} entries of ${fileName}; quote a longer piece that only the one you mean contains.`,
  };
}
