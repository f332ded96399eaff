/**
 * The built-in tools, registered in one explicit list. Toolsets: "core" (`session_search`), "cron"
 * (`cronjob`), "memory" (`memory`), "skills" (`skills_list`, `skill_view`, `skill_manage`).
 */

import { ToolRegistry } from "../agent/tool-registry.js";
import type { Tool } from "../agent/types.js";
import { cronjobTool } from "../tools/cron/index.js";
import { memoryTool } from "../tools/memory/index.js";
import { sessionSearchTool } from "../tools/session-search/index.js";
import { skillsTools } from "../tools/skills/index.js";

/** Every built-in tool. Later features (send_message) add theirs here. */
export const builtinTools: readonly Tool[] = [sessionSearchTool, cronjobTool, memoryTool, ...skillsTools];

/** A registry holding `tools`. @defaultValue tools: builtinTools */
export function createToolRegistry(tools: readonly Tool[] = builtinTools): ToolRegistry {
  return new ToolRegistry().register(...tools);
}
