/**
 * `memory`: the agent's long-term notes. Two bounded files: `memory` (its notes about the environment,
 * tools and lessons learned) and `user` (who the user is, what they prefer), those of whom the turn acts
 * for (the owners share one pair; every other user has their own). The system prompt shows both as
 * they were when the session started; a write shows up there from the next session on.
 */
export { memoryTool } from "./declaration.js";
export { memoryStateMethods } from "./state.js";
