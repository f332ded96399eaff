/**
 * The agents of one gateway (part of the config assembly): the default agent is the top-level config;
 * each entry of `agents:` is another, every field of it optional and falling back to the top level but
 * its memory and its workspaces, which are its own (`agents/<name>/memories` and
 * `agents/<name>/workspaces` unless `memory_dir` and `workspace_root` say where). A turn's agent is read
 * from its session key (core/chat.ts), so the gateway and every worker resolve it alike from the one
 * shared config. `checkAgents` is the load-time check of `agents:` and `routes:`.
 */
import { isAbsolute, join, relative, resolve } from "node:path";
import {
  type BackendName,
  type ExecSection,
  execBackendOptionsOf,
  parseExecOptions,
  workspaceRoots,
} from "../agent/exec/settings.js";
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
    skillsDir?: string | undefined;
    execBackend?: BackendName | undefined;
    workspaceRoot?: string | undefined;
  }[];
  routes: readonly { agent: string; platform?: string | undefined }[];
  platforms: Readonly<Record<string, unknown>>;
  exec: ExecSection;
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
  /** Its skills folder: `skills_dir`, else the shared `HERALD_HOME/skills`. */
  skillsDir: string;
  /** Where its commands run: `exec_backend`, else `exec.backend`. */
  execBackend: BackendName;
  /** Where its workspaces live: `workspace_root`, else `agents/<name>/workspaces`. */
  workspaceRoot: string;
}

/** The further agents by name. */
export function agentProfiles(config: AgentsSettings): Map<string, AgentProfile> {
  const at = (path: string) => (isAbsolute(path) ? path : join(config.homeDir, path));
  const roots = workspaceRoots(config).agentRoots;
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
          skillsDir: a.skillsDir ? at(a.skillsDir) : join(config.homeDir, "skills"),
          execBackend: a.execBackend ?? config.exec.backend,
          workspaceRoot: roots.get(a.name) ?? join(home, "workspaces"),
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
    if (agent.execBackend) checkBackend(config, i, agent.execBackend);
  }
  checkWorkspaceRoots(config);
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

/**
 * An agent's `exec_backend` must be one the `exec` section can build (`ssh` needs `exec.ssh`, a cloud
 * provider its key). @throws ConfigError naming `agents.<i>.exec_backend` and the fix
 */
function checkBackend(config: AgentsSettings, i: number, backend: BackendName): void {
  try {
    parseExecOptions({ ...execBackendOptionsOf(config.exec), backend });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(
      `agents.${i}.exec_backend`,
      `config.yaml: agents.${i}.exec_backend is '${backend}', which the exec section cannot build: ${err.message}. Fix: add those settings to exec:, or pick another backend.`,
      { cause: err },
    );
  }
}

/** Whether `inner` is `outer` or inside it. */
const within = (inner: string, outer: string) => {
  const rel = relative(outer, inner);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
};

/**
 * Each agent's workspace root must be a folder of workspaces alone: pruning deletes the folders in it
 * that were not used for the retention, so it must not hold HERALD_HOME, another root (agents may share
 * one), nor a memory or skills folder; nor sit inside another root, whose pruning would delete it.
 * @throws ConfigError naming `agents.<i>.workspace_root` and the fix
 */
function checkWorkspaceRoots(config: AgentsSettings): void {
  const { rootDir, agentRoots } = workspaceRoots(config);
  const profiles = agentProfiles(config);
  const kept = [
    join(config.homeDir, "skills"),
    join(config.homeDir, "memories"),
    ...[...profiles.values()].flatMap((p) => [p.skillsDir, p.memoryDir]),
  ];
  const roots = [resolve(rootDir), ...agentRoots.values()];
  for (const [i, agent] of config.agents.entries()) {
    const root = agentRoots.get(agent.name);
    if (!agent.workspaceRoot || !root) continue;
    const clash = within(resolve(config.homeDir), root)
      ? "holds HERALD_HOME"
      : kept.some((dir) => within(resolve(dir), root) || within(root, resolve(dir)))
        ? "holds a memory or skills folder, or is inside one"
        : roots.some((other) => other !== root && (within(other, root) || within(root, other)))
          ? "is inside another agent's workspace root, or holds one"
          : undefined;
    if (clash) {
      throw new ConfigError(
        `agents.${i}.workspace_root`,
        `config.yaml: agents.${i}.workspace_root '${agent.workspaceRoot}' (${root}) ${clash}; unused folders in a workspace root are deleted after exec.workspace_retention_days. Fix: give the agent a folder of its own for workspaces, e.g. agents/${agent.name}/workspaces.`,
      );
    }
  }
  checkKeptApart(config, profiles, roots);
}

/**
 * A skills or memory folder in reach of the commands would let them write what enters the prompts.
 * @throws ConfigError naming `agents.<i>.skills_dir` or `memory_dir` and the fix
 */
function checkKeptApart(
  config: AgentsSettings,
  profiles: ReadonlyMap<string, AgentProfile>,
  roots: readonly string[],
): void {
  for (const [i, agent] of config.agents.entries()) {
    const profile = profiles.get(agent.name);
    for (const [key, given, dir] of [
      ["skills_dir", agent.skillsDir, profile?.skillsDir],
      ["memory_dir", agent.memoryDir, profile?.memoryDir],
    ] as const) {
      if (!given || !dir) continue;
      const at = resolve(dir);
      if (!roots.some((root) => within(at, root) || within(root, at))) continue;
      throw new ConfigError(
        `agents.${i}.${key}`,
        `config.yaml: agents.${i}.${key} '${given}' (${at}) is inside a workspace root, or holds one, where commands write and unused folders are deleted. Fix: give it a folder apart from the workspaces, e.g. agents/${agent.name}/${key === "skills_dir" ? "skills" : "memories"}.`,
      );
    }
  }
}
