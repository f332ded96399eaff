/**
 * The start/stop/status every adapter that opens once and then waits for the platform shares, and the
 * first answers of a webhook that takes events by POST. An adapter holds one `AdapterLifecycle`, passes
 * its own opening to `start`, undoes what is its own (clients, timers, streams) after `stop`, and reads
 * the gateway's handler from `onMessage` while running.
 */
import { describeError } from "../../core/errors.js";
import type { AdapterStatus, InboundHandler, KeyValueStore } from "../../core/types.js";
import { answerServed, servedId } from "./served-files.js";

/** An adapter's running state: opened at most once at a time, stopped idempotently. */
export class AdapterLifecycle {
  private starting: Promise<void> | undefined;
  private state: AdapterStatus = { state: "stopped" };
  private handler: InboundHandler | undefined;

  /** The gateway's handler while running; undefined before `start` has opened and after `stop`. */
  get onMessage(): InboundHandler | undefined {
    return this.handler;
  }

  /**
   * Opens once: `starting`, then `open(onMessage)`, then `running` with `onMessage` kept. A call while
   * opening or open returns the same promise. When `open` throws, the state is `failed` with the
   * error's description (so `open` must keep secrets out of its messages), the promise rejects with
   * the error, and the next `start` opens again.
   */
  start(onMessage: InboundHandler, open: (onMessage: InboundHandler) => Promise<void>): Promise<void> {
    this.starting ??= this.open(onMessage, open).catch((err: unknown) => {
      this.starting = undefined;
      this.state = { state: "failed", detail: describeError(err) };
      throw err;
    });
    return this.starting;
  }

  private async open(
    onMessage: InboundHandler,
    open: (onMessage: InboundHandler) => Promise<void>,
  ): Promise<void> {
    this.state = { state: "starting" };
    await open(onMessage);
    this.handler = onMessage;
    this.state = { state: "running" };
  }

  /** Waits for an opening under way (its failure ignored), forgets the handler, reports `stopped`. */
  async stop(): Promise<void> {
    const starting = this.starting;
    this.starting = undefined;
    await starting?.catch(() => undefined);
    this.handler = undefined;
    this.state = { state: "stopped" };
  }

  status(): AdapterStatus {
    return this.state;
  }

  /**
   * Answers a webhook request in the order a POST webhook's checks go: a file served from under the
   * webhook path (`GET …/media/<id>`, when `served` holds them), 405 for any other method but POST,
   * 503 while not running; else `handle(onMessage)`, which checks the signature before it reads
   * anything else. `handle` may throw: the HTTP router's boundary answers 500.
   */
  async receive(
    request: Request,
    handle: (onMessage: InboundHandler) => Promise<Response>,
    served?: KeyValueStore,
  ): Promise<Response> {
    const media = served ? servedId(request) : undefined;
    if (served && media) return answerServed(media, served);
    if (request.method !== "POST") return new Response("method not allowed", { status: 405 });
    const onMessage = this.handler;
    if (!onMessage) return new Response("not running", { status: 503 });
    return handle(onMessage);
  }
}
