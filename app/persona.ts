/**
 * SOUL.md, personalities and AGENTS.md wired for the gateway (part of the composition root): what the
 * prompt builder snapshots per session (the identity, the workspace's project context) and
 * `/personality`.
 */
import { join } from "node:path";
import { WorkspaceManager } from "../agent/exec/workspaces.js";
import { personalityCommands } from "../agent/persona/commands.js";
import { PersonaFiles } from "../agent/persona/files.js";
import type { CommandModule } from "../core/commands.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { TurnRecord } from "../core/turn.js";
import type { RunnerState } from "../gateway/types.js";
import type { HeraldConfig } from "./config.js";

export interface Persona {
  /** The prompt builder's `identity`: the chat's personality, else SOUL.md, else none. */
  identity(turn: TurnRecord): string | undefined;
  /** Extra snapshot sections: AGENTS.md of the session's workspace. */
  sections(turn: TurnRecord): string[];
  /** `/personality`; `refresh` drops a session's prompt snapshot after a switch. */
  commands(refresh: (sessionKey: string) => void): CommandModule;
}

/** Builds the persona files' readers on `HERALD_HOME`. */
export function createPersona(config: HeraldConfig, state: Pick<RunnerState, "kv">, logger: Logger): Persona {
  const log = logger.child({ component: "persona" });
  const files = new PersonaFiles({
    homeDir: config.homeDir,
    onError: (path, error) => log.warn({ path, error: describeError(error) }, "persona file unreadable"),
  });
  const choices = state.kv("personalities");
  // The same directories the terminal and file tools use (without touching the disk).
  const workspaces = new WorkspaceManager({
    rootDir: join(config.homeDir, "workspaces"),
    scope: config.exec.workspaceScope,
  });
  return {
    identity: (turn) => files.identity(choices.get(turn.sessionKey)),
    sections: (turn) => {
      const { dir } = workspaces.workspaceFor({
        sessionKey: turn.sessionKey,
        userKey: `${turn.chat.platform}:user:${turn.userId}`,
      });
      const context = files.projectContext(dir);
      return context ? [context] : [];
    },
    commands: (refresh) => personalityCommands({ files, choices, changed: refresh }),
  };
}
