/**
 * The `cron` member of the `StateClient`: the scheduler's jobs as the `cronjob` tool reaches them, with
 * the argument schemas of its methods for the gateway's state API.
 */
import { z } from "zod";
import type { CronStateApi } from "../../../scheduler/types.js";
import { callerSchema, type MethodsOf, type StateMethodSchemas } from "../../state-methods.js";

declare module "../../types.js" {
  interface StateClient {
    /** Cron jobs (the `cronjob` tool); absent where no scheduler is reachable. */
    cron?: CronStateApi | undefined;
  }
}

const cronCaller = callerSchema.extend({ chatType: z.enum(["dm", "group"]).optional() });
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

/** The argument schemas of the `cron` member. */
export const cronStateMethods = {
  "cron.create": z.tuple([cronInput, cronCaller]),
  "cron.list": z.tuple([cronCaller]),
  "cron.update": z.tuple([z.string(), cronInput.partial(), cronCaller]),
  "cron.setPaused": z.tuple([z.string(), z.boolean(), cronCaller]),
  "cron.remove": z.tuple([z.string(), cronCaller]),
  "cron.runNow": z.tuple([z.string(), cronCaller]),
} satisfies StateMethodSchemas<MethodsOf<"cron">>;
