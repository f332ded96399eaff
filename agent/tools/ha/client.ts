/**
 * One process's connection to Home Assistant's WebSocket API (home-assistant-js-websocket over `ws`,
 * authenticated with the long-lived token), opened on the first call and kept: the library
 * reconnects a dropped socket itself with a growing wait (up to 5 s). A connection that could not be
 * opened is forgotten, so the next call tries again; a token refused on a reconnect closes it, so the
 * next call reports the refusal. Each request is bounded by `timeoutMs` and the caller's signal.
 * Errors are `HaError`s whose message says what is wrong and how to fix it, never with the token.
 */
import type { Connection, MessageBase } from "home-assistant-js-websocket";
import { HeraldError } from "../../../core/errors.js";
import type { Logger } from "../../../core/logger.js";
import { FIX_TOKEN, FIX_URL } from "./settings.js";
import { ERR_CANNOT_CONNECT, ERR_CONNECTION_LOST, ERR_INVALID_AUTH, wsSocketFactory } from "./socket.js";

/** An entity's state as `get_states` gives it. */
export interface HaState {
  entity_id: string;
  state: string;
  attributes: Record<string, unknown>;
  last_changed?: string | undefined;
  last_updated?: string | undefined;
}

/** One service's description (`get_services`). */
export interface HaServiceInfo {
  name?: string | undefined;
  description?: string | undefined;
  fields?: Record<string, { name?: string; description?: string; required?: boolean; example?: unknown }>;
  target?: unknown;
}

/** `get_services`: domain → service → description. */
export type HaServices = Record<string, Record<string, HaServiceInfo>>;

/** The registries' entries the listing reads (`config/*_registry/list`). */
export interface HaRegistries {
  entities: { entity_id: string; area_id?: string | null; device_id?: string | null }[];
  devices: { id: string; area_id?: string | null }[];
  areas: { area_id: string; name: string }[];
}

/** A call to Home Assistant failed; the message says why and what to do. */
export class HaError extends HeraldError {
  constructor(message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super(message, { code: "tool_error", ...options });
    this.name = "HaError";
  }
}

/** Where the client connects, and its bounds. */
export interface HaClientOptions {
  /** `http(s)://host:port`, no trailing slash. */
  url: string;
  token: string;
  /** One request (and opening the connection) may take this long. */
  timeoutMs: number;
  logger: Logger;
}

/** The library's "connection lost": thrown as its code, or in flight as a result frame carrying it. */
function isLost(err: unknown): boolean {
  if (err === ERR_CONNECTION_LOST) return true;
  const inner =
    err && typeof err === "object" && "error" in err ? (err as { error?: unknown }).error : undefined;
  return Boolean(
    inner && typeof inner === "object" && (inner as { code?: unknown }).code === ERR_CONNECTION_LOST,
  );
}

/** Home Assistant over its WebSocket API. */
export class HaClient {
  #connection: Promise<Connection> | undefined;

  constructor(private readonly options: HaClientOptions) {}

  /** Every entity's state. */
  states(signal: AbortSignal): Promise<HaState[]> {
    return this.request<HaState[]>({ type: "get_states" }, signal);
  }

  /** Every service, by domain. */
  services(signal: AbortSignal): Promise<HaServices> {
    return this.request<HaServices>({ type: "get_services" }, signal);
  }

  /** The entity, device and area registries (an admin's token; without, empty lists). */
  async registries(signal: AbortSignal): Promise<HaRegistries> {
    const read = <T>(type: string) =>
      this.request<T[]>({ type }, signal).catch((err: unknown) => {
        this.options.logger.debug({ type, error: String(err) }, "home assistant registry unreadable");
        return [] as T[];
      });
    const [entities, devices, areas] = await Promise.all([
      read<HaRegistries["entities"][number]>("config/entity_registry/list"),
      read<HaRegistries["devices"][number]>("config/device_registry/list"),
      read<HaRegistries["areas"][number]>("config/area_registry/list"),
    ]);
    return { entities, devices, areas };
  }

  /** Calls a service; what it answered (`response` when it returns one). */
  callService(
    call: { domain: string; service: string; data?: object | undefined; target?: object | undefined },
    returnResponse: boolean,
    signal: AbortSignal,
  ): Promise<{ response?: unknown }> {
    const message: MessageBase = {
      type: "call_service",
      domain: call.domain,
      service: call.service,
      ...(call.data ? { service_data: call.data } : {}),
      ...(call.target ? { target: call.target } : {}),
      ...(returnResponse ? { return_response: true } : {}),
    };
    return this.request(message, signal, false);
  }

  /** Closes the connection (the next call opens a new one). */
  close(): void {
    const open = this.#connection;
    this.#connection = undefined;
    void open?.then((c) => c.close()).catch(() => undefined);
  }

  /** One command; a read that found the connection lost is sent once more after it is back. */
  private async request<T>(message: MessageBase, signal: AbortSignal, retry = true): Promise<T> {
    try {
      return await this.once<T>(message, signal);
    } catch (err) {
      if (!retry || !isLost(err)) throw this.explain(err);
      await new Promise((r) => setTimeout(r, 1000));
      return this.once<T>(message, signal).catch((e: unknown) => Promise.reject(this.explain(e)));
    }
  }

  private async once<T>(message: MessageBase, signal: AbortSignal): Promise<T> {
    signal.throwIfAborted();
    const connection = await this.bounded(this.connect(), signal);
    // The library sets the id; a fresh object per call.
    return this.bounded(connection.sendMessagePromise<T>({ ...message }), signal);
  }

  private connect(): Promise<Connection> {
    this.#connection ??= this.open().catch((err: unknown) => {
      this.#connection = undefined;
      throw err;
    });
    return this.#connection;
  }

  private async open(): Promise<Connection> {
    const { url, token, timeoutMs, logger } = this.options;
    const { createConnection, createLongLivedTokenAuth } = await import("home-assistant-js-websocket");
    const auth = createLongLivedTokenAuth(url, token);
    const connection = await createConnection({
      auth,
      createSocket: wsSocketFactory(auth.wsUrl, token, timeoutMs),
    });
    connection.addEventListener("disconnected", () => logger.warn({}, "home assistant connection lost"));
    connection.addEventListener("ready", () => logger.debug({}, "home assistant connected"));
    connection.addEventListener("reconnect-error", () => {
      logger.error({}, "home assistant refused the token on reconnect");
      this.close();
    });
    logger.info({ url, version: connection.haVersion }, "home assistant connected");
    return connection;
  }

  /** `promise`, or a rejection when the signal aborts or `timeoutMs` passes first. */
  private bounded<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
    const { timeoutMs } = this.options;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject("timeout"), timeoutMs);
      const onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      promise.then(resolve, reject).finally(() => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
      });
    });
  }

  /** The library's error codes and result errors, as what to do about them. */
  private explain(err: unknown): unknown {
    const { url, timeoutMs } = this.options;
    if (err instanceof HeraldError || err instanceof Error) return err;
    if (err === ERR_INVALID_AUTH)
      return new HaError(
        `Home Assistant at ${url} refused the access token (auth_invalid): it is wrong or was revoked. Fix: ${FIX_TOKEN}`,
      );
    if (err === ERR_CANNOT_CONNECT)
      return new HaError(`Could not connect to Home Assistant at ${url}/api/websocket. Fix: ${FIX_URL}`, {
        retryable: true,
      });
    if (isLost(err))
      return new HaError(`The connection to Home Assistant at ${url} was lost; try again shortly.`, {
        retryable: true,
      });
    if (err === "timeout")
      return new HaError(`Home Assistant at ${url} did not answer within ${timeoutMs} ms.`, {
        retryable: true,
      });
    if (err && typeof err === "object" && "message" in err) {
      const { code, message } = err as { code?: unknown; message?: unknown };
      return new HaError(`Home Assistant answered ${String(code ?? "error")}: ${String(message)}`);
    }
    return new HaError(`Home Assistant failed: ${String(err)}`);
  }
}
