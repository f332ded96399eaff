/**
 * `task_board`: the shared board that agents and people both see (`herald tasks list|show`). `create`
 * adds a task, `claim` takes one (the oldest free one, or `id`) atomically across every worker, `update`
 * changes its text or result, `complete` ends it as done or failed, `list` shows the board. A claim ends
 * with the claiming turn: a turn that dies without completing its task gives it back.
 */
export { taskBoardTool } from "./declaration.js";
export { createTaskBoard, type TaskBoardConfig, type TaskBoardGateway } from "./gateway.js";
export { type BoardActor, type BoardTask, type TaskBoardStateApi, taskBoardStateMethods } from "./state.js";
