/**
 * `herald doctor`'s lines of the bot accounts (`<platform>.accounts`: each checked by its platform
 * module as the platform's own section is, under its own name) and of the agents (`agents:`, each
 * with the routes that lead to it).
 */
import { existsSync } from "node:fs";
import type { DoctorContext, DoctorLine } from "../core/settings.js";
import { agentProfiles } from "./agents.js";
import { configuredAccounts, type HeraldConfig } from "./config.js";

/** Each bot account's lines: its module's doctor lines named `<platform>@<account>`, or one line without them. */
export async function accountLines(config: HeraldConfig, context: DoctorContext): Promise<DoctorLine[]> {
  const lines: DoctorLine[] = [];
  for (const { name, module, section } of configuredAccounts(config)) {
    const account = name.slice(module.name.length + 1);
    if (!module.doctor) {
      lines.push({ ok: true, text: `${name}: bot account of ${module.name}, configured` });
      continue;
    }
    try {
      const own = await module.doctor(section, { ...context, account });
      lines.push(...own.map((line) => ({ ...line, text: named(line.text, module.name, name) })));
    } catch (err) {
      // A module's doctor must not throw; one that does is a failed line, not a failed doctor.
      lines.push({ ok: false, text: `${name}: the check failed: ${(err as Error).message}` });
    }
  }
  return lines;
}

/** A module's line under the account's name: `telegram: …` becomes `telegram@family: …`. */
function named(text: string, platform: string, name: string): string {
  if (text.startsWith(`${name}:`)) return text;
  if (text.startsWith(`${platform}:`)) return `${name}:${text.slice(platform.length + 1)}`;
  return `${name}: ${text}`;
}

/** How a route reads: the fields it matches on. */
function routeText(route: HeraldConfig["routes"][number]): string {
  const parts = [
    route.platform ? `platform ${route.platform}` : "",
    route.chat ? `chat ${route.chat}` : "",
    route.chatType ? `${route.chatType}s` : "",
    route.user ? `user ${route.user}` : "",
  ].filter(Boolean);
  return parts.length ? parts.join(" + ") : "every message";
}

/**
 * The agents: one line each with its routes (in the order they are checked), its model and where its
 * SOUL.md is; nothing when `agents:` is empty. An agent no route leads to is reached only by `/agent`.
 */
export function agentLines(config: HeraldConfig): DoctorLine[] {
  if (!config.agents.length) return [];
  const profiles = agentProfiles(config);
  const routes = (agent: string) =>
    config.routes.flatMap((r, i) => (r.agent === agent ? [`#${i + 1} ${routeText(r)}`] : []));
  const lines: DoctorLine[] = [
    {
      ok: true,
      text: `agents: default, ${config.agents.map((a) => a.name).join(", ")}; ${config.routes.length} route(s), first match wins, no match: default`,
    },
  ];
  const defaultRoutes = routes("default");
  if (defaultRoutes.length)
    lines.push({ ok: true, text: `agent default: routes ${defaultRoutes.join("; ")}` });
  for (const agent of config.agents) {
    const profile = profiles.get(agent.name)!;
    const own = routes(agent.name);
    const soul = existsSync(profile.soulPath)
      ? profile.soulPath
      : `${profile.soulPath} missing, persona or SOUL.md stands in`;
    const facts = `model ${agent.model ?? "the default"}, SOUL.md ${soul}`;
    lines.push(
      own.length
        ? { ok: true, text: `agent ${agent.name}: routes ${own.join("; ")}; ${facts}` }
        : {
            ok: true,
            text: `agent ${agent.name}: no route leads to it; ${facts}`,
            fix: `add a route (routes: - agent: ${agent.name}) or switch a chat with /agent ${agent.name}`,
          },
    );
  }
  return lines;
}
