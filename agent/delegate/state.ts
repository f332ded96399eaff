/**
 * The `delegate` member of the `StateClient`: child turns of `delegate_task`, kept and run by the
 * gateway on its job queue, with the argument schemas of its methods for the gateway's state API.
 */
import { z } from "zod";
import type { TurnOrigin } from "../../core/turn.js";
import { chatRefSchema, type MethodsOf, type StateMethodSchemas } from "../state-methods.js";

declare module "../types.js" {
  interface StateClient {
    /** Child turns of `delegate_task`, kept by the gateway (durable, once per task). */
    delegate?: DelegateStateApi | undefined;
  }
}

/** One task of `delegate_task`. */
export interface DelegateTask {
  goal: string;
  /** What the parent passes along: the child sees nothing else of the conversation. */
  context?: string | undefined;
  /** The toolsets the child asks for; only those the parent has are granted. */
  toolsets?: string[] | undefined;
}

/** The turn and call that delegate, as the gateway keys the children by them. */
export interface DelegateParent {
  turnId: string;
  callId: string;
  origin: TurnOrigin;
  /** The parent's toolsets: a child never gets more. */
  toolsets: string[];
  /** 0 for a chat's own turn. */
  depth: number;
  model?: string | undefined;
}

/** A child's state as the parent sees it. `done`, `failed` and `cancelled` are final. */
export interface DelegateChild {
  index: number;
  id: string;
  goal: string;
  state: "waiting" | "running" | "done" | "failed" | "cancelled";
  /** The child's last answer (done), or what went wrong (failed, cancelled). */
  summary?: string | undefined;
  files?: { path: string; fileName?: string | undefined }[] | undefined;
  /** The model that answered (which worker ran it, when workers differ by model). */
  model?: string | undefined;
}

/** A `delegate_task` call's children. `version` grows with every change of a child's state. */
export interface DelegateGroup {
  id: string;
  version: number;
  children: DelegateChild[];
}

/** Child turns of `delegate_task`, kept and run by the gateway on its job queue. */
export interface DelegateStateApi {
  /**
   * Starts the children of one call; idempotent by parent turn and tasks (a parent run again after a
   * crash that asks for the same tasks gets the same children, never new ones). Rejects with
   * `invalid_input` past the depth limit.
   */
  start(parent: DelegateParent, tasks: DelegateTask[], maxParallel?: number): Promise<DelegateGroup>;
  /** Resolves when the group's version passes `seenVersion`, or after `waitMs`, with the group. */
  wait(groupId: string, seenVersion: number, waitMs: number): Promise<DelegateGroup>;
  /**
   * Cancels the group's unfinished children (on any worker) when their parent is over (cancelled,
   * ended); a parent aborted by a shutdown stays open, runs again and keeps them.
   */
  cancel(groupId: string): Promise<void>;
}

/** The argument schemas of the `delegate` member. */
export const delegateStateMethods = {
  "delegate.start": z.tuple([
    z.strictObject({
      turnId: z.string().min(1),
      callId: z.string().min(1),
      origin: z.strictObject({
        sessionId: z.string(),
        sessionKey: z.string(),
        chat: chatRefSchema,
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
} satisfies StateMethodSchemas<MethodsOf<"delegate">>;
