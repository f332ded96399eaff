/**
 * Plugins' hooks: the hook points and their events (`types.ts`), and the `HookRunner` that calls them in
 * order, each within its time limit, with a failing hook's error contained.
 */
export { HookRunner, type HookRunnerOptions, originOfTurn } from "./runner.js";
export type * from "./types.js";
export { HOOK_POINTS } from "./types.js";
