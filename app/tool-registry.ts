/**
 * The tools every process registers whatever is configured (declarations only: each implementation
 * loads on the tool's first call), what the system prompt says of each toolset, and the registry built
 * on them. Apart from app/tools.ts, which builds the tools that need the process's parts, so the
 * gateway's own registries (the learning review's) load none of those.
 */
import { delegateTool } from "../agent/delegate/index.js";
import { type Tool, ToolRegistry } from "../agent/index.js";
import { clarifyTool } from "../agent/tools/clarify/index.js";
import { cronjobTool } from "../agent/tools/cron/index.js";
import { memoryTool } from "../agent/tools/memory/index.js";
import { sessionSearchTool } from "../agent/tools/session-search/index.js";
import { skillsTools } from "../agent/tools/skills/index.js";
import { taskBoardTool } from "../agent/tools/task-board/index.js";
import { todoTool } from "../agent/tools/todo/index.js";

/** The tools that need nothing but their context. Later features add theirs here. */
export const builtinTools: readonly Tool[] = [
  sessionSearchTool,
  cronjobTool,
  memoryTool,
  ...skillsTools,
  clarifyTool,
  todoTool,
  delegateTool,
  taskBoardTool,
];

/**
 * What the system prompt says of each toolset not sent up front (`tools.lazy`); the tool names are
 * listed beside it. Fixed text: it is part of every request's prefix.
 */
export const toolsetSummaries: Readonly<Record<string, string>> = {
  core: "search past conversations, ask the user, keep a plan",
  cron: "schedule tasks and reminders",
  memory: "save and edit long-term memory",
  skills: "list, read and write saved procedures",
  terminal: "run shell commands and background processes in the session's workspace",
  files: "read, write, patch and search files in the workspace",
  web: "search the web and read pages",
  voice: "speak text as a voice note",
  vision: "describe or read images",
  browser: "open pages in a real browser: read, click, type, log in, screenshots, downloads",
  image: "make pictures from a description",
  code: "run a Python or JavaScript script that calls these tools many times in one step",
  messaging: "send messages and files to chats",
  mcp: "resources and prompts of the MCP servers",
  ha: "Home Assistant: list entities and services, read states, call services",
  checkpoints: "restore the workspace to a checkpoint taken before a turn changed it",
};

/** A registry holding `tools`. @defaultValue tools: builtinTools */
export function createToolRegistry(tools: readonly Tool[] = builtinTools): ToolRegistry {
  return new ToolRegistry().register(...tools).describeToolsets(toolsetSummaries);
}
