/**
 * The wire form of the `StateClient`: every method a remote worker may call on the gateway, by path
 * (`searchSessions`, `cron.create`), with the zod schema of its arguments (a JSON array in call order).
 * The paths and their argument types are derived from the `StateClient` interface itself, members merged
 * in by features included, so a table that misses a method or whose schema does not fit the method's
 * parameters fails the type check. Each owner declares the schemas of its own members beside the
 * member (this file: the agent's own); the composition root assembles the whole table, which the HTTP
 * client builds its members from and the gateway's state API validates every call against.
 */
import { z } from "zod";
import type { StateClient } from "./types.js";

/** A member of the `StateClient`: declared in `types.ts`, or merged in by the feature that owns it. */
export type StateMember = keyof StateClient & string;

type Api<K extends StateMember> = NonNullable<StateClient[K]>;

/** A method member's own path, or `member.method` for each method of an object member. */
type PathsOf<K extends StateMember> =
  Api<K> extends (...args: never[]) => unknown ? K : `${K}.${keyof Api<K> & string}`;

/** Every method path of the `StateClient`. */
export type StateMethodName = { [K in StateMember]-?: PathsOf<K> }[StateMember];

/** The method paths of one member. */
export type MethodsOf<K extends StateMember> = Extract<StateMethodName, K | `${K}.${string}`>;

/** The parameters of the method at `path`. */
export type StateMethodArgs<P extends StateMethodName> = P extends `${infer K extends StateMember}.${infer M}`
  ? M extends keyof Api<K>
    ? Api<K>[M] extends (...args: infer A) => unknown
      ? A
      : never
    : never
  : P extends StateMember
    ? Api<P> extends (...args: infer A) => unknown
      ? A
      : never
    : never;

/** Argument schemas of the methods `P`: what an owner declares for its member. */
export type StateMethodSchemas<P extends StateMethodName> = { [Q in P]: z.ZodType<StateMethodArgs<Q>> };

/** The whole table: a schema for every method of every member. */
export type StateMethodTable = StateMethodSchemas<StateMethodName>;

/** A chat as the state methods take it. */
export const chatRefSchema = z.strictObject({
  platform: z.string().min(1),
  chatId: z.string(),
  threadId: z.string().optional(),
});

/** Who calls: the turn's chat and user. */
export const callerSchema = z.strictObject({
  chat: chatRefSchema,
  userId: z.string(),
  agent: z.string().optional(),
});

/** A model's tool call. */
export const toolCallSchema = z.object({
  id: z.string(),
  type: z.literal("function"),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

/** A chat message of a turn. */
export const chatMessageSchema = z.discriminatedUnion("role", [
  z.object({ role: z.literal("system"), content: z.string() }),
  z.object({ role: z.literal("user"), content: z.string(), name: z.string().optional() }),
  z.object({
    role: z.literal("assistant"),
    content: z.string().nullable(),
    tool_calls: z.array(toolCallSchema).optional(),
  }),
  z.object({ role: z.literal("tool"), content: z.string(), tool_call_id: z.string() }),
]);

const searchOptions = z.strictObject({
  limit: z.number().int().positive().optional(),
  keyPrefix: z.string().optional(),
  userId: z.string().optional(),
  excludeSessionId: z.string().optional(),
  meaningOnly: z.boolean().optional(),
  allTerms: z.boolean().optional(),
});

/** The schemas of the members `types.ts` declares: session search, chat notices and messages, the plan. */
export const agentStateMethods = {
  searchSessions: z.tuple([z.string(), searchOptions.optional()]),
  "chat.notify": z.tuple([chatRefSchema, z.string().min(1).max(4000)]),
  "chat.send": z.tuple([
    callerSchema,
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
} satisfies StateMethodSchemas<MethodsOf<"searchSessions" | "chat" | "todo">>;

/** Splits a path into the member and the method (`cron.create` → `["cron", "create"]`). */
export function splitStateMethod(name: string): [member: string, method: string | undefined] {
  const dot = name.indexOf(".");
  return dot < 0 ? [name, undefined] : [name.slice(0, dot), name.slice(dot + 1)];
}

/** Path of the state API on the gateway's HTTP server; a method is `POST <path>/<method name>`. */
export const STATE_API_PATH = "/internal/state";

/** How a method's failure travels back to the worker. */
export interface StateApiErrorBody {
  error: { code: string; message: string; retryable: boolean };
}
