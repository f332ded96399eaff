/**
 * Which toolsets a turn gets: its platform's or the default ones, less the terminal tools in groups
 * unless allowed, plus the MCP servers that serve its chat and admit whom it acts for; which of them
 * every request carries in full; and the limit of a cron job's runs (the toolsets of the chat that made
 * the job). The gateway's turn context reads it. It is the configuration put together with two tool
 * folders' facts (the MCP servers' reach, the owners' plugin toolset), which the agent's own unit does
 * not import, so it sits with the config assembly.
 */

import { OWNERS_PLUGINS_TOOLSET } from "../agent/plugins/index.js";
import { type McpServerConfig, mcpToolset, serverAdmits, serverServes } from "../agent/tools/mcp/index.js";
import type { Caller } from "../core/access.js";
import { sessionKey } from "../core/chat.js";
import type { ChatRef, ChatType } from "../core/types.js";
import type { AccessPolicy } from "../gateway/index.js";
import type { ToolsetLimit } from "../scheduler/index.js";
import type { SessionStore } from "../sessions/types.js";
import type { HeraldConfig } from "./config.js";

/**
 * The toolsets of a turn: its platform's, else the default; groups lose the terminal, file and code
 * tools (`execute_code` runs code in the sandbox as `terminal` does) unless the owner gave them
 * (`exec.groups`). Each MCP server that serves the platform and chat type, and admits
 * the turn (`access: owners` servers only an owner's), adds its toolset (`mcp_<name>`), and then `mcp`
 * (resources and prompts) comes too. An owner's turn also gets the tools of the plugins only owners get;
 * the Home Assistant toolset is an owner's too unless `ha.access` is `everyone`.
 * @param owner whether the turn acts for an owner. @defaultValue true
 * @param own the toolsets of the turn's agent (`agents[].toolsets`), over the platform's and the default.
 */
export function toolsetsFor(
  config: HeraldConfig,
  platform: string,
  chatType: ChatType,
  mcpServers: readonly McpServerConfig[] = config.mcpServers,
  owner = true,
  own?: readonly string[],
): string[] {
  const toolsets = own ?? config.platforms[platform]?.toolsets ?? config.agent.toolsets;
  const base =
    chatType === "group" && !config.exec.groups
      ? toolsets.filter((t) => !["terminal", "files", "code", "checkpoints"].includes(t))
      : toolsets;
  const mcp = mcpServers
    .filter((s) => serverServes(s, platform, chatType) && serverAdmits(s, owner))
    .map((s) => mcpToolset(s.name));
  const plugins = owner ? [OWNERS_PLUGINS_TOOLSET] : [];
  const house = owner || config.ha.access === "everyone" ? base : base.filter((t) => t !== "ha");
  return [...new Set([...house, ...plugins, ...mcp, ...(mcp.length ? ["mcp"] : [])])];
}

/** {@link toolsetsFor} of a turn's caller, its owner rights read from the owner policy. */
export function toolsetsOfCaller(
  config: HeraldConfig,
  access: AccessPolicy,
  caller: Caller,
  chatType: ChatType,
  mcpServers: readonly McpServerConfig[],
  own?: readonly string[],
): string[] {
  const owner = access.callerIsOwner(caller);
  return toolsetsFor(config, caller.chat.platform, chatType, mcpServers, owner, own);
}

/**
 * The toolsets whose schemas a turn's every request carries: `tools.eager_for` of the platform and
 * chat type, else of the platform, else `tools.eager`; undefined with `tools.lazy: false` (all of them).
 */
export function eagerToolsetsFor(
  config: HeraldConfig,
  platform: string,
  chatType: ChatType,
): string[] | undefined {
  const { lazy, eager, eagerFor } = config.tools;
  if (!lazy) return undefined;
  return eagerFor[`${platform}:${chatType}`] ?? eagerFor[platform] ?? eager;
}

/**
 * The limit of a cron job's runs: the toolsets a turn of its maker in the job's origin chat gets. A job
 * of an older build does not say whether its origin is a DM: it is one when that chat has a DM session
 * of the maker, else it counts as a group (the smaller set).
 */
export function jobToolsetLimit(
  config: HeraldConfig,
  access: AccessPolicy,
  sessions: Pick<SessionStore, "list">,
  mcpServers: () => readonly McpServerConfig[],
): ToolsetLimit {
  const chatTypeOf = (chat: ChatRef, userId: string): ChatType => {
    if (chat.threadId) return "group";
    const key = sessionKey({ chat, chatType: "dm", userId });
    return sessions.list({ keyPrefix: key, limit: 50 }).some((s) => s.key === key) ? "dm" : "group";
  };
  return (maker) =>
    toolsetsFor(
      config,
      maker.chat.platform,
      maker.chatType ?? chatTypeOf(maker.chat, maker.userId),
      mcpServers(),
      access.isOwner(maker.chat.platform, maker.userId),
    );
}
