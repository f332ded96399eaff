/**
 * The agents of one gateway (part of the config assembly): the default agent is the top-level config;
 * each entry of `agents:` is another, every field of it optional and falling back to the top level but
 * its memory, which is its own (`agents/<name>/memories` unless `memory_dir` says where). A turn's
 * agent is read from its session key (core/chat.ts), so the gateway and every worker resolve it alike
 * from the one shared config. `checkAgents` is the load-time check of `agents:` and `routes:`.
 */
import { isAbsolute, join } from "node:path";
import { agentOfKey, basePlatform } from "../core/chat.js";
import { ConfigError } from "../core/errors.js";

/** The settings the agents are read from (`HeraldConfig` has this shape). */
export interface AgentsSettings {
  homeDir: string;
  agents: readonly {
    name: string;
    soul?: string | undefined;
    persona?: string | undefined;
    memoryDir?: string | undefined;
    toolsets?: string[] | undefined;
    model?: string | undefined;
  }[];
  routes: readonly { agent: string; platform?: string | undefined }[];
  platforms: Readonly<Record<string, unknown>>;
}

/** One further agent with its paths settled. */
export interface AgentProfile {
  name: string;
  /**
   * Its SOUL.md: `soul`, else `agents/<name>/SOUL.md`; read at each session's start, and while it is
   * missing or empty the agent's `persona`, else HERALD_HOME/SOUL.md, stands in.
   */
  soulPath: string;
  persona: string | undefined;
  /** Its memory folder. */
  memoryDir: string;
  toolsets: string[] | undefined;
  model: string | undefined;
}

/** The further agents by name. */
export function agentProfiles(config: AgentsSettings): Map<string, AgentProfile> {
  const at = (path: string) => (isAbsolute(path) ? path : join(config.homeDir, path));
  return new Map(
    config.agents.map((a) => {
      const home = join(config.homeDir, "agents", a.name);
      return [
        a.name,
        {
          name: a.name,
          soulPath: a.soul ? at(a.soul) : join(home, "SOUL.md"),
          persona: a.persona,
          memoryDir: a.memoryDir ? at(a.memoryDir) : join(home, "memories"),
          toolsets: a.toolsets,
          model: a.model,
        },
      ];
    }),
  );
}

/** The profile of the agent a session key belongs to; undefined for the default agent (or an unknown one). */
export function profileOfKey(
  profiles: ReadonlyMap<string, AgentProfile>,
  sessionKey: string,
): AgentProfile | undefined {
  const name = agentOfKey(sessionKey);
  return name ? profiles.get(name) : undefined;
}

/**
 * Checks `agents:` and `routes:`: unique names other than `default`, routes naming agents that exist
 * and platforms (or bot accounts) that are configured. @throws ConfigError naming the key and the fix
 */
export function checkAgents(config: AgentsSettings, knownPlatforms: readonly string[]): void {
  const names = new Set<string>(["default"]);
  for (const [i, agent] of config.agents.entries()) {
    if (names.has(agent.name)) {
      throw new ConfigError(
        `agents.${i}.name`,
        `config.yaml: agents.${i}.name '${agent.name}' is ${agent.name === "default" ? "the top-level agent's name" : "used twice"}. Fix: give each agent its own name.`,
      );
    }
    names.add(agent.name);
  }
  for (const [i, route] of config.routes.entries()) {
    if (!names.has(route.agent)) {
      throw new ConfigError(
        `routes.${i}.agent`,
        `config.yaml: routes.${i}.agent names '${route.agent}', which is no agent. Fix: use one of ${[...names].join(", ")} (agents: lists the others).`,
      );
    }
    const p = route.platform;
    if (p && !knownPlatforms.includes(basePlatform(p))) {
      throw new ConfigError(
        `routes.${i}.platform`,
        `config.yaml: routes.${i}.platform '${p}' is no platform. Fix: use a platform's name (telegram) or one of its accounts (telegram@<account name>).`,
      );
    }
    if (p && p !== basePlatform(p) && !(p in config.platforms)) {
      throw new ConfigError(
        `routes.${i}.platform`,
        `config.yaml: routes.${i}.platform '${p}' names an account that ${basePlatform(p)}.accounts does not have. Fix: add it there, or correct the name.`,
      );
    }
  }
}
