/**
 * Each agent's skills: the shared `HERALD_HOME/skills` folder is the default agent's, and a further
 * agent's unless `agents[].skills_dir` gives it a folder of its own. A turn's agent is read from its
 * session key (a tool call's from its caller), so the prompt's skills index, `skills_list`,
 * `skill_view`, `skill_manage`, `/skills`, `/<skill>`, the learning review and the curator each use the
 * store of the agent they act for.
 */
import { join, resolve } from "node:path";
import type { Caller } from "../../core/access.js";
import { agentOfKey } from "../../core/chat.js";
import type { Logger } from "../../core/logger.js";
import {
  bundledSkillsDir,
  FileSkillStore,
  type RemoteSkillsPort,
  type SkillsStateApi,
  searchRemoteSkills,
} from "../../skills/index.js";
import type { MemoryScope } from "../../skills/memory/index.js";

/** The skill store of each agent; stores of agents that share a folder are one. */
export class AgentSkillStores {
  /** The shared folder's store (`HERALD_HOME/skills`): the default agent's. */
  readonly shared: FileSkillStore;
  readonly #byDir = new Map<string, FileSkillStore>();
  readonly #dirOf: ReadonlyMap<string, string>;
  readonly #logger: Logger;

  /** @param agentDirs each further agent's skills folder by name; an agent not in it uses the shared one. */
  constructor(options: {
    homeDir: string;
    logger: Logger;
    agentDirs?: ReadonlyMap<string, string> | undefined;
  }) {
    this.#logger = options.logger;
    this.#dirOf = options.agentDirs ?? new Map();
    this.shared = this.#storeAt(join(options.homeDir, "skills"));
    for (const dir of this.#dirOf.values()) this.#storeAt(dir);
  }

  /** The store of `agent` (undefined: the default agent). */
  of(agent: string | undefined): FileSkillStore {
    const dir = agent ? this.#dirOf.get(agent) : undefined;
    return dir ? this.#storeAt(dir) : this.shared;
  }

  /** The store of the agent a session key names. */
  ofKey(sessionKey: string): FileSkillStore {
    return this.of(agentOfKey(sessionKey));
  }

  /** Every store (the curator tends each). */
  all(): FileSkillStore[] {
    return [...this.#byDir.values()];
  }

  #storeAt(dir: string): FileSkillStore {
    const key = resolve(dir);
    let store = this.#byDir.get(key);
    if (!store) {
      store = new FileSkillStore({ bundledDir: bundledSkillsDir(), userDir: key, logger: this.#logger });
      this.#byDir.set(key, store);
    }
    return store;
  }
}

/**
 * The `skills` member of the StateClient: each call on its caller's agent's store. Skills enter every
 * chat's prompt of their agent: only a turn that acts for an owner changes them.
 */
export function ownersSkills(
  stores: AgentSkillStores,
  scopeOf: (caller: Caller) => MemoryScope,
  remote: RemoteSkillsPort,
): SkillsStateApi {
  return {
    search: (query) => searchRemoteSkills(remote, query),
    list: (caller) => stores.of(caller.agent).list(),
    view: (name, viewOptions, caller) => stores.of(caller.agent).view(name, viewOptions),
    manage: async (request, caller) =>
      scopeOf(caller).kind === "owners"
        ? stores.of(caller.agent).manage(request)
        : {
            ok: false,
            error:
              "refused: only the owner may create or change skills (they are shared by every chat). Keep what you learned about this user with the memory tool instead.",
          },
  };
}
