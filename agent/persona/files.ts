/**
 * The agent's identity and context files: `HERALD_HOME/SOUL.md` (who the agent is, in place of the
 * built-in persona), `HERALD_HOME/personalities/<name>.md` (identities a chat may switch to with
 * /personality) and `AGENTS.md` in a session's workspace (project context). Read synchronously, when a
 * session's prompt snapshot is taken, so each file is read once per session, not once per turn.
 */
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  statSync,
} from "node:fs";
import { join } from "node:path";

/** A file's text is cut to this many characters (the prompt prefix goes out on every request). */
export const MAX_FILE_CHARS = 20_000;

/** Names a personality file may have (its file name without `.md`, lowercased). */
const NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;

/** The name /personality uses for SOUL.md (or the built-in persona when there is none). */
export const DEFAULT_PERSONALITY = "default";

export interface PersonaFilesOptions {
  /** `HERALD_HOME`. */
  homeDir: string;
  /** Called with a file that exists but cannot be read (permissions); it is then left out. */
  onError?: ((path: string, error: unknown) => void) | undefined;
}

/** Reads SOUL.md, the personalities and AGENTS.md files. Every method is synchronous and never throws. */
export class PersonaFiles {
  readonly #home: string;
  readonly #onError: PersonaFilesOptions["onError"];

  constructor(options: PersonaFilesOptions) {
    this.#home = options.homeDir;
    this.#onError = options.onError;
  }

  /** The text of `HERALD_HOME/SOUL.md`, or undefined when it is missing or empty. */
  soul(): string | undefined {
    return this.#read(join(this.#home, "SOUL.md"));
  }

  /** The text of another agent's SOUL.md at `path`, or undefined when it is missing or empty. */
  soulAt(path: string): string | undefined {
    return this.#read(path);
  }

  /** The names of `HERALD_HOME/personalities/*.md`, sorted (files with other names are skipped). */
  personalities(): string[] {
    let names: string[];
    try {
      names = readdirSync(join(this.#home, "personalities"));
    } catch {
      return [];
    }
    return names
      .filter((n) => n.toLowerCase().endsWith(".md"))
      .map((n) => n.slice(0, -3).toLowerCase())
      .filter((n) => NAME.test(n) && n !== DEFAULT_PERSONALITY)
      .sort();
  }

  /** The text of personality `name`, or undefined when there is no such (non-empty) file. */
  personality(name: string): string | undefined {
    const lower = name.toLowerCase();
    if (!NAME.test(lower)) return undefined;
    const file = readdirSafe(join(this.#home, "personalities")).find(
      (n) => n.toLowerCase() === `${lower}.md`,
    );
    return file ? this.#read(join(this.#home, "personalities", file)) : undefined;
  }

  /**
   * The identity for a chat: its chosen personality's text, else SOUL.md, else undefined (the built-in
   * persona). A chosen personality whose file is gone falls back to SOUL.md. `soul` reads the SOUL.md of
   * the turn's agent. @defaultValue HERALD_HOME/SOUL.md
   */
  identity(
    chosen: string | undefined,
    soul: () => string | undefined = () => this.soul(),
  ): string | undefined {
    const picked = chosen && chosen !== DEFAULT_PERSONALITY ? this.personality(chosen) : undefined;
    return picked ?? soul();
  }

  /**
   * The prompt section of `AGENTS.md` in `workspaceDir`, or undefined when there is none. The file is
   * the commands' to change: a symbolic link there (to HERALD_HOME/.env, say) is not followed, and only
   * a regular file is read, as much of it as the prompt takes.
   */
  projectContext(workspaceDir: string): string | undefined {
    const path = join(workspaceDir, "AGENTS.md");
    let fd: number | undefined;
    try {
      fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      if (!fstatSync(fd).isFile()) return undefined;
      // UTF-8 takes at most 4 bytes a character: this is always enough for MAX_FILE_CHARS.
      const buffer = Buffer.alloc(MAX_FILE_CHARS * 4 + 4);
      const length = readSync(fd, buffer, 0, buffer.length, 0);
      const text = cut(buffer.subarray(0, length).toString("utf8").trim());
      return text && `## Project context (AGENTS.md in your workspace)\n${text}`;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // ELOOP: a symbolic link, refused by O_NOFOLLOW.
      if (code !== "ENOENT" && code !== "ELOOP") this.#onError?.(path, err);
      return undefined;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  #read(path: string): string | undefined {
    try {
      if (!statSync(path).isFile()) return undefined;
      return cut(readFileSync(path, "utf8").trim());
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") this.#onError?.(path, err);
      return undefined;
    }
  }
}

/** `text` cut at `MAX_FILE_CHARS` with a note; undefined when empty. */
function cut(text: string): string | undefined {
  if (!text) return undefined;
  return text.length > MAX_FILE_CHARS
    ? `${text.slice(0, MAX_FILE_CHARS)}\n[…cut at ${MAX_FILE_CHARS} characters]`
    : text;
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
