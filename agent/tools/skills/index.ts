/**
 * The skills tools (toolset "skills"). Progressive disclosure: the system prompt lists each skill's
 * name and description; `skills_list` and `skill_view` load detail on demand; `skill_manage` turns what
 * worked into a reusable skill, or improves one, with the previous version kept for rollback.
 */
export { skillManageTool, skillsListTool, skillsTools, skillViewTool } from "./declaration.js";
export { skillsStateMethods } from "./state.js";
