/**
 * The `skills` member of the `StateClient`: the skill store as the `skills_list`, `skill_view` and
 * `skill_manage` tools reach it (and the skill indexes `skills_list` searches), with the argument schemas of its methods for the gateway's state API.
 */
import { z } from "zod";
import type { SkillsStateApi } from "../../../skills/types.js";
import { callerSchema, type MethodsOf, type StateMethodSchemas } from "../../state-methods.js";

declare module "../../types.js" {
  interface StateClient {
    /** Skills (the `skills_list`, `skill_view`, `skill_manage` tools). */
    skills?: SkillsStateApi | undefined;
  }
}

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

/** The argument schemas of the `skills` member. */
export const skillsStateMethods = {
  "skills.list": z.tuple([callerSchema]),
  "skills.view": z.tuple([
    z.string(),
    z.strictObject({ file: z.string().optional(), countUse: z.boolean().optional() }).optional(),
    callerSchema,
  ]),
  "skills.manage": z.tuple([skillManage, callerSchema]),
  "skills.search": z.tuple([z.string().max(500)]),
} satisfies StateMethodSchemas<MethodsOf<"skills">>;
