/**
 * Runs the hooks of every plugin at each point: in order, each with a time limit, errors contained and
 * logged. Filters chain (the second plugin sees the first one's rewrite); the first block or drop wins.
 * It implements the loop's `TurnHooks` port and the runner's inbound hook by shape, so neither knows it.
 */
import { describeError } from "../../../core/errors.js";
import type { Logger } from "../../../core/logger.js";
import type { TurnOrigin } from "../../../core/turn.js";
import type { InboundMessage } from "../../../core/types.js";
import type { HookContext, HookOrigin, HookPoint, NamedHooks } from "./types.js";

/** Options of {@link HookRunner}. */
export interface HookRunnerOptions {
  /** The hooks to run, asked at every call (plugins may be reloaded in between). */
  source: () => readonly NamedHooks[];
  /** How long one hook may take. @defaultValue 2000 */
  timeoutMs?: number;
  logger: Logger;
}

const TIMED_OUT = Symbol("timed out");

/** Runs hooks; no method throws. */
export class HookRunner {
  readonly #source: () => readonly NamedHooks[];
  readonly #timeoutMs: number;
  readonly #log: Logger;
  /** The last inbound hook run of each chat, so the next one waits for it. */
  readonly #inboundChains = new Map<string, Promise<void>>();

  constructor(options: HookRunnerOptions) {
    this.#source = options.source;
    this.#timeoutMs = options.timeoutMs ?? 2000;
    this.#log = options.logger.child({ component: "hooks" });
  }

  /** Whether any plugin has a hook at `point` (callers skip work otherwise). */
  has(point: HookPoint): boolean {
    return this.#source().some((h) => typeof h.hooks[point] === "function");
  }

  /**
   * The inbound message after every `inbound` hook, or undefined when one dropped it. Messages of one
   * chat pass in arrival order (a slow hook on the first does not let the second overtake it).
   */
  inbound(message: InboundMessage): Promise<InboundMessage | undefined> {
    const { platform, chat } = message;
    const key = `${platform}\u0000${chat.chatId}\u0000${chat.threadId ?? ""}`;
    const previous = this.#inboundChains.get(key) ?? Promise.resolve();
    const next = previous.then(() => this.#inbound(message));
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.#inboundChains.set(key, settled);
    void settled.then(() => {
      if (this.#inboundChains.get(key) === settled) this.#inboundChains.delete(key);
    });
    return next;
  }

  async #inbound(message: InboundMessage): Promise<InboundMessage | undefined> {
    let current = message;
    for (const owner of this.#with("inbound")) {
      const origin = originOfMessage(current);
      const result = await this.#call(owner, "inbound", (ctx) =>
        owner.hooks.inbound!({ origin, text: current.text, userName: current.sender.name }, ctx),
      );
      if (!result || typeof result !== "object") continue;
      if ("drop" in result && result.drop) {
        this.#log.info({ plugin: owner.name, reason: result.reason }, "inbound message dropped by a hook");
        return undefined;
      }
      if ("text" in result && typeof result.text === "string") current = { ...current, text: result.text };
    }
    return current;
  }

  /** The reason the first blocking `beforeToolCall` hook gave, or undefined to let the call run. */
  async beforeToolCall(tool: string, args: unknown, origin: TurnOrigin): Promise<string | undefined> {
    for (const owner of this.#with("beforeToolCall")) {
      const result = await this.#call(owner, "beforeToolCall", (ctx) =>
        owner.hooks.beforeToolCall!({ tool, args, origin: originOfTurn(origin) }, ctx),
      );
      if (result && typeof result === "object" && typeof result.block === "string") {
        this.#log.info({ plugin: owner.name, tool }, "tool call blocked by a hook");
        return `blocked by the ${owner.name} plugin: ${result.block}`;
      }
    }
    return undefined;
  }

  /** The result text after every `afterToolCall` hook (unchanged when none rewrote it). */
  async afterToolCall(
    tool: string,
    args: unknown,
    result: { content: string; isError: boolean },
    origin: TurnOrigin,
  ): Promise<string> {
    let content = result.content;
    for (const owner of this.#with("afterToolCall")) {
      const out = await this.#call(owner, "afterToolCall", (ctx) =>
        owner.hooks.afterToolCall!(
          { tool, args, origin: originOfTurn(origin), result: { content, isError: result.isError } },
          ctx,
        ),
      );
      if (out && typeof out === "object" && typeof out.content === "string") content = out.content;
    }
    return content;
  }

  /** The reply after every `beforeReply` hook. */
  async beforeReply(text: string, origin: TurnOrigin): Promise<string> {
    let current = text;
    for (const owner of this.#with("beforeReply")) {
      const out = await this.#call(owner, "beforeReply", (ctx) =>
        owner.hooks.beforeReply!({ text: current, origin: originOfTurn(origin) }, ctx),
      );
      if (out && typeof out === "object" && typeof out.text === "string") current = out.text;
    }
    return current;
  }

  /** Tells every `turnFinished` hook; resolves when all are done (or timed out). */
  async turnFinished(
    turnId: string,
    origin: HookOrigin,
    outcome: "ok" | "failed",
    reply: string | undefined,
  ): Promise<void> {
    await Promise.all(
      this.#with("turnFinished").map((owner) =>
        this.#call(owner, "turnFinished", (ctx) =>
          owner.hooks.turnFinished!({ turnId, origin, outcome, reply }, ctx),
        ),
      ),
    );
  }

  #with(point: HookPoint): NamedHooks[] {
    return this.#source().filter((h) => typeof h.hooks[point] === "function");
  }

  /** Runs one hook with the time limit; a throw or a timeout is logged and gives undefined. */
  async #call<T>(
    owner: NamedHooks,
    point: HookPoint,
    fn: (ctx: HookContext) => T | Promise<T>,
  ): Promise<T | undefined> {
    const controller = new AbortController();
    const logger = this.#log.child({ plugin: owner.name, hook: point });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
      timer = setTimeout(() => resolve(TIMED_OUT), this.#timeoutMs);
    });
    try {
      const result = await Promise.race([
        Promise.resolve().then(() => fn({ signal: controller.signal, logger })),
        timeout,
      ]);
      if (result === TIMED_OUT) {
        controller.abort(new Error(`hook took longer than ${this.#timeoutMs} ms`));
        logger.warn({ timeoutMs: this.#timeoutMs }, "hook timed out; its result is ignored");
        return undefined;
      }
      return result;
    } catch (err) {
      logger.warn({ err: describeError(err) }, "hook threw; its result is ignored");
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }
}

function originOfMessage(message: InboundMessage): HookOrigin {
  return {
    platform: message.platform,
    chatId: message.chat.chatId,
    threadId: message.chat.threadId,
    chatType: message.chatType,
    userId: message.sender.id,
  };
}

/** A turn's origin as hooks see it. */
export function originOfTurn(origin: TurnOrigin): HookOrigin {
  return {
    platform: origin.chat.platform,
    chatId: origin.chat.chatId,
    threadId: origin.chat.threadId,
    chatType: origin.chatType,
    userId: origin.userId,
    sessionKey: origin.sessionKey,
  };
}
