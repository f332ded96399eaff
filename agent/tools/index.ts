/**
 * The built-in tools, registered in one explicit list. Toolsets: "core" (`session_search`), "cron"
 * (`cronjob`), "memory" (`memory`), "skills" (`skills_list`, `skill_view`, `skill_manage`).
 */
import { skillsTools } from "../../skills/tools.js";
import { ToolRegistry } from "../tool-registry.js";
import type { Tool } from "../types.js";
import { cronjobTool } from "./cronjob.js";
import { memoryTool } from "./memory.js";
import { sessionSearchTool } from "./session-search.js";

/** Every built-in tool. Later features (send_message) add theirs here. */
export const builtinTools: readonly Tool[] = [sessionSearchTool, cronjobTool, memoryTool, ...skillsTools];

/** A registry holding `tools`. @defaultValue tools: builtinTools */
export function createToolRegistry(tools: readonly Tool[] = builtinTools): ToolRegistry {
  return new ToolRegistry().register(...tools);
}
