/**
 * `cronjob`: lets a user schedule work in plain words ("every weekday at 8 send me the build failures",
 * "remind me in 20 minutes"). The model turns the request into a schedule and a self-contained prompt;
 * the job's runs report to this chat unless told otherwise. A user sees and changes only their own jobs.
 */
export { cronjobTool } from "./declaration.js";
export { cronStateMethods } from "./state.js";
