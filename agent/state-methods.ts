/**
 * The `StateClient` methods a remote worker may call on the gateway, each with the zod schema of its
 * arguments (a JSON array in call order). The HTTP client builds its members from this table and the
 * gateway's state API validates every call against it, so a new `StateClient` member is one line here.
 * The table is checked against the contracts: a member missing here, or a schema whose output does not
 * fit the member's parameters, fails the type check.
 */
import { z } from "zod";
import type { CronStateApi } from "../scheduler/types.js";
import type { MemoryStateApi } from "../skills/memory/types.js";
import type { SkillsStateApi } from "../skills/types.js";
import type { ApprovalsStateApi } from "./exec/approvals/requests.js";
import type {
  ChatStateApi,
  DelegateStateApi,
  StateClient,
  TaskBoardStateApi,
  TodoStateApi,
} from "./types.js";

const chatRef = z.strictObject({
  platform: z.string().min(1),
  chatId: z.string(),
  threadId: z.string().optional(),
});
const caller = z.strictObject({ chat: chatRef, userId: z.string() });
const cronCaller = caller.extend({ chatType: z.enum(["dm", "group"]).optional() });
const toolCall = z.object({
  id: z.string(),
  type: z.literal("function"),
  function: z.object({ name: z.string(), arguments: z.string() }),
});
const chatMessage = z.discriminatedUnion("role", [
  z.object({ role: z.literal("system"), content: z.string() }),
  z.object({ role: z.literal("user"), content: z.string(), name: z.string().optional() }),
  z.object({
    role: z.literal("assistant"),
    content: z.string().nullable(),
    tool_calls: z.array(toolCall).optional(),
  }),
  z.object({ role: z.literal("tool"), content: z.string(), tool_call_id: z.string() }),
]);
const searchOptions = z.strictObject({
  limit: z.number().int().positive().optional(),
  keyPrefix: z.string().optional(),
  userId: z.string().optional(),
  excludeSessionId: z.string().optional(),
});
const cronInput = z.strictObject({
  schedule: z.string(),
  prompt: z.string(),
  deliver: z.string().optional(),
  name: z.string().optional(),
  timezone: z.string().optional(),
  skills: z.array(z.string()).optional(),
  toolsets: z.array(z.string()).optional(),
  model: z.string().optional(),
  timeoutMinutes: z.number().positive().optional(),
  missedRuns: z.enum(["auto", "run", "skip"]).optional(),
});
const boardActor = z.strictObject({ owner: z.string().min(1).max(200), turnId: z.string().optional() });
const memoryTarget = z.enum(["memory", "user"]);
const skillManage = z.discriminatedUnion("action", [
  z.strictObject({
    action: z.literal("create"),
    name: z.string(),
    content: z.string(),
    file: z.string().optional(),
  }),
  z.strictObject({
    action: z.literal("patch"),
    name: z.string(),
    content: z.string().optional(),
    oldText: z.string().optional(),
    newText: z.string().optional(),
    file: z.string().optional(),
  }),
  z.strictObject({ action: z.literal("delete"), name: z.string() }),
  z.strictObject({ action: z.literal("rollback"), name: z.string() }),
]);

/** Methods of an optional `StateClient` member, as `member.method` paths. */
type Paths<Prefix extends string, Api> = {
  [K in keyof Api & string]: `${Prefix}.${K}`;
}[keyof Api & string];

/** Every method path the table must hold. */
export type StateMethodName =
  | "searchSessions"
  | Paths<"cron", CronStateApi>
  | Paths<"memory", MemoryStateApi>
  | Paths<"skills", SkillsStateApi>
  | Paths<"approvals", ApprovalsStateApi>
  | Paths<"chat", ChatStateApi>
  | Paths<"todo", TodoStateApi>
  | Paths<"delegate", DelegateStateApi>
  | Paths<"taskBoard", TaskBoardStateApi>;

/** The parameters of the method at `path`. */
type ArgsOf<P extends StateMethodName> = P extends "searchSessions"
  ? Parameters<StateClient["searchSessions"]>
  : P extends `cron.${infer M extends keyof CronStateApi}`
    ? Parameters<CronStateApi[M]>
    : P extends `memory.${infer M extends keyof MemoryStateApi}`
      ? Parameters<MemoryStateApi[M]>
      : P extends `skills.${infer M extends keyof SkillsStateApi}`
        ? Parameters<SkillsStateApi[M]>
        : P extends `approvals.${infer M extends keyof ApprovalsStateApi}`
          ? Parameters<ApprovalsStateApi[M]>
          : P extends `chat.${infer M extends keyof ChatStateApi}`
            ? Parameters<ChatStateApi[M]>
            : P extends `todo.${infer M extends keyof TodoStateApi}`
              ? Parameters<TodoStateApi[M]>
              : P extends `delegate.${infer M extends keyof DelegateStateApi}`
                ? Parameters<DelegateStateApi[M]>
                : P extends `taskBoard.${infer M extends keyof TaskBoardStateApi}`
                  ? Parameters<TaskBoardStateApi[M]>
                  : never;

/**
 * Argument schemas by method path. To add a member (say `sendMessage` on a new `messaging` extension):
 * add its path to {@link StateMethodName} and one line here; client and server pick it up.
 */
export const stateMethods = {
  searchSessions: z.tuple([z.string(), searchOptions.optional()]),
  "cron.create": z.tuple([cronInput, cronCaller]),
  "cron.list": z.tuple([cronCaller]),
  "cron.update": z.tuple([z.string(), cronInput.partial(), cronCaller]),
  "cron.setPaused": z.tuple([z.string(), z.boolean(), cronCaller]),
  "cron.remove": z.tuple([z.string(), cronCaller]),
  "cron.runNow": z.tuple([z.string(), cronCaller]),
  "memory.read": z.tuple([memoryTarget, caller]),
  "memory.add": z.tuple([memoryTarget, z.string(), caller]),
  "memory.replace": z.tuple([memoryTarget, z.string(), z.string(), caller]),
  "memory.remove": z.tuple([memoryTarget, z.string(), caller]),
  "skills.list": z.tuple([]),
  "skills.view": z.tuple([
    z.string(),
    z.strictObject({ file: z.string().optional(), countUse: z.boolean().optional() }).optional(),
  ]),
  "skills.manage": z.tuple([skillManage, caller]),
  "chat.notify": z.tuple([chatRef, z.string().min(1).max(4000)]),
  "chat.send": z.tuple([
    caller,
    z.string().min(1).max(500),
    z.strictObject({
      text: z.string().max(20_000),
      files: z
        .array(
          z.strictObject({
            path: z.string().min(1),
            fileName: z.string().optional(),
            mimeType: z.string().optional(),
          }),
        )
        .max(10)
        .optional(),
    }),
    z.string().min(1).max(300),
  ]),
  "todo.get": z.tuple([z.string()]),
  "todo.set": z.tuple([
    z.string(),
    z
      .array(
        z.strictObject({
          id: z.number().int().positive(),
          text: z.string().min(1).max(1000),
          status: z.enum(["pending", "in_progress", "done", "cancelled"]),
        }),
      )
      .max(100),
  ]),
  "delegate.start": z.tuple([
    z.strictObject({
      turnId: z.string().min(1),
      callId: z.string().min(1),
      origin: z.strictObject({
        sessionId: z.string(),
        sessionKey: z.string(),
        chat: chatRef,
        chatType: z.enum(["dm", "group"]),
        userId: z.string(),
        userName: z.string().optional(),
      }),
      toolsets: z.array(z.string()),
      depth: z.number().int().min(0),
      model: z.string().optional(),
    }),
    z
      .array(
        z.strictObject({
          goal: z.string().min(1).max(20_000),
          context: z.string().max(100_000).optional(),
          toolsets: z.array(z.string()).optional(),
        }),
      )
      .min(1)
      .max(50),
    z.number().int().positive().optional(),
  ]),
  "delegate.wait": z.tuple([z.string(), z.number().int(), z.number().int().min(0).max(25_000)]),
  "delegate.cancel": z.tuple([z.string()]),
  "taskBoard.create": z.tuple([
    z.strictObject({ title: z.string().min(1).max(500), details: z.string().max(20_000).optional() }),
    boardActor,
  ]),
  "taskBoard.claim": z.tuple([boardActor, z.number().int().positive().optional()]),
  "taskBoard.update": z.tuple([
    z.number().int().positive(),
    z.strictObject({
      title: z.string().min(1).max(500).optional(),
      details: z.string().max(20_000).optional(),
      result: z.string().max(20_000).optional(),
    }),
    boardActor,
  ]),
  "taskBoard.complete": z.tuple([
    z.number().int().positive(),
    z.enum(["done", "failed"]),
    z.string().max(20_000),
    boardActor,
  ]),
  "taskBoard.list": z.tuple([
    z
      .strictObject({
        state: z.enum(["todo", "claimed", "done", "failed"]).optional(),
        limit: z.number().int().positive().max(1000).optional(),
      })
      .optional(),
  ]),
  "approvals.check": z.tuple([z.string(), z.string(), z.array(z.string()).max(64)]),
  "approvals.request": z.tuple([
    z.strictObject({
      sessionKey: z.string(),
      sessionId: z.string(),
      chat: chatRef,
      userId: z.string(),
      command: z.string(),
      ruleId: z.string(),
      ruleDescription: z.string(),
      ruleIds: z.array(z.string()).max(64).optional(),
      target: z.string().optional(),
      call: toolCall.optional(),
      step: z.array(chatMessage).max(200).optional(),
    }),
  ]),
} satisfies { [P in StateMethodName]: z.ZodType<ArgsOf<P>> };

/** Whether `name` is a method of the table (an untrusted path from a request). */
export function isStateMethod(name: string): name is StateMethodName {
  return Object.hasOwn(stateMethods, name);
}

/** Splits a path into the member and the method (`cron.create` → `["cron", "create"]`). */
export function splitStateMethod(name: StateMethodName): [member: string, method: string | undefined] {
  const dot = name.indexOf(".");
  return dot < 0 ? [name, undefined] : [name.slice(0, dot), name.slice(dot + 1)];
}

/** Path of the state API on the gateway's HTTP server; a method is `POST <path>/<method name>`. */
export const STATE_API_PATH = "/internal/state";

/** How a method's failure travels back to the worker. */
export interface StateApiErrorBody {
  error: { code: string; message: string; retryable: boolean };
}
