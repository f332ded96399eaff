/**
 * The built-in tools, registered in one explicit list. Toolsets: "core" (`session_search`), "cron"
 * (`cronjob`).
 */
import { ToolRegistry } from "../tool-registry.js";
import type { Tool } from "../types.js";
import { cronjobTool } from "./cronjob.js";
import { sessionSearchTool } from "./session-search.js";

/** Every built-in tool. Later features (memory, cron, send_message, skills) add theirs here. */
export const builtinTools: readonly Tool[] = [sessionSearchTool, cronjobTool];

/** A registry holding `tools`. @defaultValue tools: builtinTools */
export function createToolRegistry(tools: readonly Tool[] = builtinTools): ToolRegistry {
  return new ToolRegistry().register(...tools);
}
