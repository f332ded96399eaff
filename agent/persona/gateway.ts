/**
 * SOUL.md, personalities and AGENTS.md on the gateway: what the prompt builder snapshots per session
 * (the identity, the workspace's project context) and `/personality`.
 */
import { agentOfKey } from "../../core/chat.js";
import type { CommandModule } from "../../core/commands.js";
import { describeError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { TurnRecord } from "../../core/turn.js";
import type { KeyValueStore } from "../../core/types.js";
import { ownerOf } from "../exec/attachments.js";
import { WorkspaceManager, type WorkspaceRootSettings, workspaceRoots } from "../exec/workspaces.js";
import { personalityCommands } from "./commands.js";
import { PersonaFiles } from "./files.js";

/** The settings the persona reads (`HeraldConfig` has this shape). */
export interface PersonaConfig extends WorkspaceRootSettings {
  exec: { workspaceScope: "session" | "user" };
}

/** A further agent's identity (`agents:`): its SOUL.md, else its persona text, else the top-level SOUL.md. */
export interface AgentIdentity {
  soulPath?: string | undefined;
  persona?: string | undefined;
}

export interface Persona {
  /** The prompt builder's `identity`: the chat's personality, else SOUL.md, else none. */
  identity(turn: TurnRecord): string | undefined;
  /** Extra snapshot sections: AGENTS.md of the session's workspace. */
  sections(turn: TurnRecord): string[];
  /** `/personality`; `refresh` drops a session's prompt snapshot after a switch. */
  commands(refresh: (sessionKey: string) => void): CommandModule;
}

/** Builds the persona files' readers on `HERALD_HOME`. */
export function createPersona(
  config: PersonaConfig,
  ports: {
    state: { kv(namespace: string): KeyValueStore };
    logger: Logger;
    /** The further agents' identities by name; a turn's agent is read from its session key. */
    agents?: ReadonlyMap<string, AgentIdentity> | undefined;
  },
): Persona {
  const { state, logger } = ports;
  const log = logger.child({ component: "persona" });
  const files = new PersonaFiles({
    homeDir: config.homeDir,
    onError: (path, error) => log.warn({ path, error: describeError(error) }, "persona file unreadable"),
  });
  const choices = state.kv("personalities");
  // The same directories the terminal and file tools use (without touching the disk).
  const workspaces = new WorkspaceManager({ ...workspaceRoots(config), scope: config.exec.workspaceScope });
  return {
    identity: (turn) => {
      const name = agentOfKey(turn.sessionKey);
      const agent = name ? ports.agents?.get(name) : undefined;
      const soul = () =>
        (agent?.soulPath ? files.soulAt(agent.soulPath) : undefined) ?? agent?.persona ?? files.soul();
      return files.identity(choices.get(turn.sessionKey), soul);
    },
    sections: (turn) => {
      const { dir } = workspaces.workspaceFor(ownerOf(turn));
      const context = files.projectContext(dir);
      return context ? [context] : [];
    },
    commands: (refresh) => personalityCommands({ files, choices, changed: refresh }),
  };
}
