/**
 * The paths of the owner table (owner-policy.test.ts): each one acts as a Telegram user of a real
 * in-process gateway (a DM to the fake Bot API, the scripted model calling the tools) and reports
 * whether it took effect. "Elsewhere" is chat 555 (someone else's) and chat 999 (the home channel the
 * owner configured). A path that did not take effect also shows that it changed nothing.
 */
import { expect, vi } from "vitest";
import { SqliteCronStore } from "../../scheduler/sqlite-cron-store.js";
import type { CronJob } from "../../scheduler/types.js";
import { botSays } from "../e2e/telegram-helpers.js";
import {
  type FakeLlmRequest,
  type FakeLlmStep,
  type FakeLlmToolCall,
  messageText,
} from "../fakes/llm/index.js";
import type { FakeTelegram } from "../fakes/telegram/index.js";
import type { Harness } from "../helpers/gateway-harness.js";

/** Someone else's chat, and the owner's home channel (`TELEGRAM_HOME_CHANNEL`). */
export const OTHER = 555;
export const HOME = 999;

/** One round of tool calls, or one computed from the request (it reads an earlier tool result). */
type Round = FakeLlmToolCall[] | ((request: FakeLlmRequest) => FakeLlmToolCall[]);

/**
 * What the scripted model does, by the `[[key]]` marker in the turn's last user message: the planned
 * rounds of tool calls, then `done [[key]]`. Call ids are `<key>.<round>.<n>`.
 */
export class ModelPlan {
  readonly #rounds = new Map<string, Round[]>();

  plan(key: string, ...rounds: Round[]): void {
    this.#rounds.set(key, rounds);
  }

  readonly answer = (request: FakeLlmRequest): FakeLlmStep => {
    const at = request.messages.findLastIndex((m) => m.role === "user");
    const key = /\[\[([^\]]+)\]\]/.exec(messageText(request.messages[at]))?.[1];
    if (!key) return { text: "ok" };
    const round = request.messages.slice(at + 1).filter((m) => m.tool_calls?.length).length;
    const step = this.#rounds.get(key)?.[round];
    if (!step) return { text: `done [[${key}]]` };
    const calls = typeof step === "function" ? step(request) : step;
    return { toolCalls: calls.map((call, n) => ({ id: `${key}.${round}.${n}`, ...call })) };
  };
}

/** One caller's gateway, as the paths see it. */
export interface PathContext {
  h: Harness;
  fake: FakeTelegram;
  model: ModelPlan;
  /** The caller's user id, which is also its DM's chat id. */
  me: number;
}

/** A path: `run` acts as the caller and says whether the action took effect. */
export interface OwnerPath {
  /** The tool or command (or `plugin ctx.send`), then what it tries. */
  path: string;
  /** Who may: owners only, or everyone admitted. */
  who: "owner" | "everyone";
  /** The registered tools or commands (without the slash) this path exercises. */
  covers: string[];
  run(ctx: PathContext, key: string): Promise<boolean>;
}

const texts = (fake: FakeTelegram, chatId: number) => fake.botMessages(chatId).map((m) => m.text ?? "");

/** Sends `please [[key]]` as the caller and waits for the turn's `done [[key]]` and the outbox. */
export async function ask(ctx: PathContext, key: string, ...rounds: Round[]): Promise<string[]> {
  ctx.model.plan(key, ...rounds);
  ctx.fake.userSends({ chatId: ctx.me, fromId: ctx.me, text: `please [[${key}]]` });
  await botSays(ctx.fake, ctx.me, `done [[${key}]]`);
  await ctx.h.gateway.runner.outbox.idle();
  return toolResults(ctx.h, key);
}

/** The results of the tool calls of `key`'s turns, in order. */
export function toolResults(h: Harness, key: string): string[] {
  const seen = new Map<string, string>();
  for (const request of h.llm.requests)
    for (const m of request.messages)
      if (m.role === "tool" && m.tool_call_id?.startsWith(`${key}.`))
        seen.set(m.tool_call_id, messageText(m));
  return [...seen.values()];
}

/**
 * Sends a command as the caller; resolves with the next bot message matching `answers` (counted by
 * matches: a progress message deleted meanwhile shifts the chat's messages).
 */
export async function command(ctx: PathContext, text: string, answers: RegExp): Promise<string> {
  const matching = () => texts(ctx.fake, ctx.me).filter((t) => answers.test(t));
  const before = matching().length;
  ctx.fake.userSends({ chatId: ctx.me, fromId: ctx.me, text });
  let found: string | undefined;
  await vi.waitFor(
    () => {
      found = matching()[before];
      expect(found).toBeDefined();
    },
    { timeout: 10_000 },
  );
  return found!;
}

/** The gateway's cron jobs named `name` (read from its own connection). */
export function jobsNamed(h: Harness, name: string): CronJob[] {
  return SqliteCronStore.on(h.state.database)
    .listJobs()
    .filter((j) => j.name === name);
}

/** Whether `text` reached `chatId`; when it did not, the tool said only the owner may. */
async function reached(ctx: PathContext, chatId: number, text: string, results: string[]): Promise<boolean> {
  await ctx.h.gateway.runner.outbox.idle();
  const arrived = texts(ctx.fake, chatId).includes(text);
  if (!arrived) expect(results.join("\n")).toMatch(/only the owner may send to another chat/);
  return arrived;
}

const send = (target: string, text: string): FakeLlmToolCall => ({
  name: "send_message",
  arguments: { target, text },
});

const createJob = (key: string, deliver?: string, prompt = `report [[${key}/run]]`): FakeLlmToolCall => ({
  name: "cronjob",
  arguments: { action: "create", schedule: "in 20m", prompt, name: key, ...(deliver ? { deliver } : {}) },
});

/** A job of `key` made by the caller's turn: exists and delivers as asked, or nothing was made. */
async function made(ctx: PathContext, key: string, deliver: string | undefined): Promise<boolean> {
  const results = await ask(ctx, key, [createJob(key, deliver)]);
  const jobs = jobsNamed(ctx.h, key);
  if (jobs.length === 0) expect(results[0]).toMatch(/only the owner may send to another chat/);
  return jobs.length === 1;
}

/** Runs the caller's job `key` now (the scheduler's tick) and waits for its run's reply at origin. */
export async function fire(ctx: PathContext, key: string): Promise<void> {
  const [job] = jobsNamed(ctx.h, key);
  await ctx.h.gateway.cron.tick(job!.nextRunAt!);
  await botSays(ctx.fake, ctx.me, `done [[${key}/run]]`);
  await ctx.h.gateway.runner.outbox.idle();
}

/** The tool paths, run by the scripted model in the caller's DM. */
export const toolPaths: OwnerPath[] = [
  {
    path: "send_message → another chat",
    who: "owner",
    covers: ["send_message"],
    run: async (ctx, key) =>
      reached(ctx, OTHER, `hi [[${key}]]`, await ask(ctx, key, [send(`telegram:${OTHER}`, `hi [[${key}]]`)])),
  },
  {
    path: "send_message → the home channel (target: telegram)",
    who: "owner",
    covers: ["send_message"],
    run: async (ctx, key) =>
      reached(ctx, HOME, `hi [[${key}]]`, await ask(ctx, key, [send("telegram", `hi [[${key}]]`)])),
  },
  {
    path: "send_message → its own chat (origin)",
    who: "everyone",
    covers: ["send_message"],
    run: async (ctx, key) =>
      reached(ctx, ctx.me, `hi [[${key}]]`, await ask(ctx, key, [send("origin", `hi [[${key}]]`)])),
  },
  {
    path: "cronjob create → another chat",
    who: "owner",
    covers: ["cronjob"],
    run: (ctx, key) => made(ctx, key, `telegram:${OTHER}`),
  },
  {
    path: "cronjob create → the home channel (deliver: telegram)",
    who: "owner",
    covers: ["cronjob"],
    run: (ctx, key) => made(ctx, key, "telegram"),
  },
  {
    path: "cronjob create → its own chat (origin), and the run delivers there",
    who: "everyone",
    covers: ["cronjob"],
    async run(ctx, key) {
      if (!(await made(ctx, key, undefined))) return false;
      await fire(ctx, key);
      return true;
    },
  },
  {
    path: "cronjob update of its own job → another chat",
    who: "owner",
    covers: ["cronjob"],
    async run(ctx, key) {
      const idOf = (request: FakeLlmRequest) =>
        /Created job (j[0-9a-f]+)/.exec(messageText(request.messages.at(-1)))?.[1] ?? "missing";
      const results = await ask(ctx, key, [createJob(key)], (request) => [
        { name: "cronjob", arguments: { action: "update", id: idOf(request), deliver: `telegram:${OTHER}` } },
      ]);
      const [job] = jobsNamed(ctx.h, key);
      const moved = job?.deliver.join(",") === `telegram:${OTHER}`;
      if (!moved) {
        expect(job?.deliver).toEqual(["origin"]);
        expect(results[1]).toMatch(/only the owner may send to another chat/);
      }
      return moved;
    },
  },
  {
    path: "a run of its own job (origin) calls send_message → another chat",
    who: "owner",
    covers: ["cronjob", "send_message"],
    async run(ctx, key) {
      ctx.model.plan(`${key}/run`, [send(`telegram:${OTHER}`, `from the run [[${key}]]`)]);
      expect(await made(ctx, key, undefined)).toBe(true);
      await fire(ctx, key);
      return reached(ctx, OTHER, `from the run [[${key}]]`, toolResults(ctx.h, `${key}/run`));
    },
  },
  {
    path: "a run of its job saved to deliver to another chat (by an older Herald)",
    who: "owner",
    covers: ["cronjob"],
    async run(ctx, key) {
      // The gateway runs in this process and holds its write lock until its batch commits on
      // setImmediate: a waiting (busy) insert here would block that very commit, so yield and retry.
      const store = SqliteCronStore.open(`${ctx.h.homeDir}/state.db`, { busyTimeoutMs: 0 });
      const origin = { platform: "telegram", chatId: String(ctx.me) };
      const now = Date.now();
      const insert = () =>
        store.insertJob(
          `jold${ctx.me}`,
          {
            name: key,
            prompt: `report [[${key}/run]]`,
            schedule: { kind: "every", everyMs: 3_600_000, anchorAt: now },
            deliver: [`telegram:${OTHER}`, "origin"],
            origin,
            createdBy: String(ctx.me),
          },
          now + 3_600_000,
          now,
        );
      for (let tries = 0; ; tries++) {
        try {
          insert();
          break;
        } catch (err) {
          if (tries > 200 || !/locked|busy/i.test(String(err))) throw err;
          await new Promise((r) => setTimeout(r, 10));
        }
      }
      store.close();
      await ctx.h.gateway.cron.sync();
      await fire(ctx, key);
      return texts(ctx.fake, OTHER).includes(`done [[${key}/run]]`);
    },
  },
  {
    path: "delegate_task: a child calls send_message → another chat",
    who: "owner",
    covers: ["delegate_task", "send_message"],
    async run(ctx, key) {
      ctx.model.plan(`${key}/child`, [send(`telegram:${OTHER}`, `from the child [[${key}]]`)]);
      await ask(ctx, key, [
        {
          name: "delegate_task",
          arguments: { tasks: [{ goal: `tell them [[${key}/child]]`, toolsets: ["messaging"] }] },
        },
      ]);
      return reached(ctx, OTHER, `from the child [[${key}]]`, toolResults(ctx.h, `${key}/child`));
    },
  },
  {
    path: "plugin ctx.send (no target: the turn's own chat)",
    who: "everyone",
    covers: ["probe_send"],
    async run(ctx, key) {
      const results = await ask(ctx, key, [{ name: "probe_send", arguments: { text: `plugin [[${key}]]` } }]);
      expect(results).toEqual(["sent"]);
      expect(texts(ctx.fake, OTHER)).not.toContain(`plugin [[${key}]]`);
      return texts(ctx.fake, ctx.me).includes(`plugin [[${key}]]`);
    },
  },
];

const OWNER_ONLY = /is for the owner only\./;

/** The commands, sent as chat messages in the caller's DM. */
export const commandPaths: OwnerPath[] = [
  {
    path: "/sethome (the platform's home channel: where the owner's reports go)",
    who: "owner",
    covers: ["sethome"],
    async run(ctx) {
      const homes = ctx.h.state.kv("home-channels");
      const answer = await command(ctx, "/sethome", /home channel|is for the owner only/);
      const moved = homes.get("telegram") === `telegram:${ctx.me}`;
      if (!moved) {
        expect(answer).toMatch(OWNER_ONLY);
        expect(homes.get("telegram")).toBeUndefined();
      }
      // The next paths send to the configured home channel again.
      homes.delete("telegram");
      return moved;
    },
  },
  {
    path: "/usage all (everyone's usage)",
    who: "owner",
    covers: ["usage"],
    run: async (ctx) =>
      !/Only the owner/.test(await command(ctx, "/usage all", /Usage|usage|Only the owner/)),
  },
  {
    path: "/reload-mcp (every chat's MCP servers)",
    who: "owner",
    covers: ["reload-mcp"],
    run: async (ctx) => !OWNER_ONLY.test(await command(ctx, "/reload-mcp", /Reloading MCP|owner only/)),
  },
  {
    path: "/reload-plugins (every chat's plugins)",
    who: "owner",
    covers: ["reload-plugins"],
    run: async (ctx) =>
      !OWNER_ONLY.test(await command(ctx, "/reload-plugins", /Reloading plugins|owner only/)),
  },
];
