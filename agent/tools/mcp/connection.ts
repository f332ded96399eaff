/**
 * One MCP server: connects in the background, lists its tools (again on `notifications/tools/list_changed`),
 * restarts with capped exponential backoff when the connection fails or ends, and fails calls at once
 * while it is not connected.
 *
 * A server with an idle timeout (`idleTimeoutMs` > 0) runs only while it is used: `offer()` gives it a
 * cached tool list without starting it (state `idle`), its first call starts it (concurrent calls share
 * the start) and checks the tool is still listed, and it stops again once no call ran for the timeout.
 * Its exit is no error then: it turns `idle`, and the next call starts it again.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Tool as SdkTool } from "@modelcontextprotocol/sdk/types.js";
import { describeError } from "../../../core/errors.js";
import type { Logger } from "../../../core/logger.js";
import type { McpListedTool } from "./cache.js";
import { cappedFetch, MAX_MCP_MESSAGE_BYTES, McpMessageTooLargeError } from "./capped-fetch.js";
import {
  connectError,
  httpStatusOf,
  isAuthRefusal,
  McpToolGoneError,
  McpUnavailableError,
} from "./errors.js";
import { loadMcpClientSdk, type McpClientSdk } from "./sdk.js";
import type {
  McpCallOptions,
  McpResourceInfo,
  McpServerConfig,
  McpServerHandle,
  McpServerState,
  McpServerStatus,
  McpToolInfo,
  PromptMessages,
  ReadResourceContents,
} from "./types.js";

/** Restart timing. */
export interface McpBackoff {
  /** @defaultValue 1000 */
  baseMs?: number;
  /** @defaultValue 60000 */
  maxMs?: number;
}

export interface McpConnectionDeps {
  logger: Logger;
  /** Called after the tool list changed (connected, refreshed, filtered). Must not throw. */
  onToolsChanged(server: string): void;
  /** Called with every list the server gave (before include/exclude: the cache's). Must not throw. */
  onListed?: ((server: string, tools: McpListedTool[]) => void) | undefined;
  backoff?: McpBackoff | undefined;
  /** Herald's version, sent as the client's. */
  version?: string | undefined;
}

/** The handshake (and tool listing) gets at least 30 s: a server started by npx may download first. */
export const handshakeTimeoutMs = (callTimeoutMs: number) => Math.max(callTimeoutMs, 30_000);

// A connection that lived this long before it ended starts its restarts from the base delay again.
const STABLE_AFTER_MS = 60_000;

/** A server's connection; `start()` returns at once, `stop()` closes it (the child is killed). */
export class McpConnection implements McpServerHandle {
  readonly config: McpServerConfig;
  readonly #deps: McpConnectionDeps;
  #client: Client | undefined;
  #transport: Transport | undefined;
  #state: McpServerState;
  #tools: McpToolInfo[] = [];
  #error: string | undefined;
  #attempts = 0;
  /** The client whose transport closed on a message over `MAX_MCP_MESSAGE_BYTES` (stdio). */
  #oversized: Client | undefined;
  #connectedAt = 0;
  #timer: NodeJS.Timeout | undefined;
  #protocol: McpServerStatus["transport"];
  #waiters = new Set<() => void>();
  #log: Logger;
  /** Bumped by `stop()`: an attempt begun before it drops what it opened. */
  #generation = 0;
  /** The running attempt was started by a call (an idle server): a failure returns it to `idle`. */
  #onDemand = false;
  /** Requests running now: the idle timer waits for them. */
  #inflight = 0;
  #idleTimer: NodeJS.Timeout | undefined;

  constructor(config: McpServerConfig, deps: McpConnectionDeps) {
    this.config = config;
    this.#deps = deps;
    this.#state = config.enabled ? "stopped" : "disabled";
    this.#protocol =
      config.transport === "stdio" ? "stdio" : config.protocol === "sse" ? "sse" : "streamable_http";
    this.#log = deps.logger.child({ mcpServer: config.name });
  }

  /**
   * Starts connecting in the background, after `delayMs` (the manager spreads its servers' starts:
   * starting a process blocks this thread for tens of milliseconds). Idempotent; a disabled server
   * does nothing.
   */
  start(delayMs = 0): void {
    if (this.#state !== "stopped") return;
    this.#state = "connecting";
    if (delayMs <= 0) {
      void this.#connect();
      return;
    }
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#connect();
    }, delayMs);
    this.#timer.unref();
  }

  /**
   * Takes `listed` (a cached list) as the server's tools without starting it: the state becomes `idle`
   * and the first call starts it. Only a stopped server with an idle timeout; returns whether it took it.
   */
  offer(listed: readonly McpListedTool[]): boolean {
    if (this.#state !== "stopped" || !this.#lazy) return false;
    this.#tools = this.#filter(listed);
    this.#state = "idle";
    return true;
  }

  /** Closes the connection and cancels a pending restart. Idempotent. */
  async stop(): Promise<void> {
    if (this.#state === "disabled") return;
    this.#state = "stopped";
    this.#generation++;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#clearIdle();
    this.#tools = [];
    const client = this.#client;
    this.#client = undefined;
    this.#transport = undefined;
    this.#wake();
    await client?.close().catch(() => undefined);
  }

  /** Resolves with the status once the first attempt settled (connected or failed), or after `timeoutMs`. */
  async ready(timeoutMs = handshakeTimeoutMs(this.config.timeoutMs)): Promise<McpServerStatus> {
    const until = Date.now() + timeoutMs;
    while (this.#state === "connecting" && Date.now() < until) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.#waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, Math.max(0, until - Date.now()));
        this.#waiters.add(done);
      });
    }
    return this.status();
  }

  status(): McpServerStatus {
    const pid =
      this.config.transport === "stdio"
        ? (this.#transport as StdioClientTransport | undefined)?.pid
        : undefined;
    return {
      name: this.config.name,
      transport: this.#protocol,
      state: this.#state,
      tools: this.#tools.length,
      ...(this.#error ? { error: this.#error } : {}),
      attempts: this.#attempts,
      ...(pid != null && this.#state === "connected" ? { pid } : {}),
    };
  }

  tools(): McpToolInfo[] {
    return this.#tools;
  }

  async callTool(name: string, args: Record<string, unknown>, options: McpCallOptions) {
    return this.#use(options.signal, async (client) => {
      await this.#checkListed(client, name);
      const result = await this.#guard(
        client,
        (signal) =>
          client.callTool({ name, arguments: args }, undefined, {
            signal,
            timeout: this.config.timeoutMs,
            ...(options.onProgress
              ? {
                  onprogress: (p: { progress: number; total?: number; message?: string }) =>
                    options.onProgress?.(
                      `${name}: ${p.total ? `${p.progress}/${p.total}` : p.progress}${p.message ? ` ${p.message}` : ""}`,
                    ),
                }
              : {}),
          }),
        options.signal,
        `tool ${name}`,
      );
      return result as Awaited<ReturnType<McpServerHandle["callTool"]>>;
    });
  }

  async listResources(options: McpCallOptions): Promise<McpResourceInfo[]> {
    return this.#use(options.signal, async (client) => {
      if (!client.getServerCapabilities()?.resources) return [];
      const out: McpResourceInfo[] = [];
      let cursor: string | undefined;
      do {
        const page = await this.#guard(
          client,
          (signal) => client.listResources(cursor ? { cursor } : {}, this.#requestOptions(signal)),
          options.signal,
          "resources/list",
        );
        for (const r of page.resources)
          out.push({ uri: r.uri, name: r.name, description: r.description, mimeType: r.mimeType });
        cursor = page.nextCursor;
      } while (cursor && out.length < 1000);
      return out;
    });
  }

  async readResource(uri: string, options: McpCallOptions): Promise<ReadResourceContents> {
    return this.#use(options.signal, async (client) => {
      const result = await this.#guard(
        client,
        (signal) => client.readResource({ uri }, this.#requestOptions(signal)),
        options.signal,
        "resources/read",
      );
      return result.contents as ReadResourceContents;
    });
  }

  async listPrompts(options: McpCallOptions) {
    return this.#use(options.signal, async (client) => {
      if (!client.getServerCapabilities()?.prompts) return [];
      const result = await this.#guard(
        client,
        (signal) => client.listPrompts({}, this.#requestOptions(signal)),
        options.signal,
        "prompts/list",
      );
      return result.prompts.map((p) => ({
        name: p.name,
        description: p.description,
        arguments: (p.arguments ?? []).map((a) => (a.required ? a.name : `${a.name}?`)),
      }));
    });
  }

  async getPrompt(
    name: string,
    args: Record<string, string>,
    options: McpCallOptions,
  ): Promise<PromptMessages> {
    return this.#use(options.signal, async (client) => {
      const result = await this.#guard(
        client,
        (signal) => client.getPrompt({ name, arguments: args }, this.#requestOptions(signal)),
        options.signal,
        "prompts/get",
      );
      return { description: result.description, messages: result.messages };
    });
  }

  #requestOptions(signal: AbortSignal) {
    return { signal, timeout: this.config.timeoutMs };
  }

  /**
   * Runs `fn` on the connected client (see `#ensure`); the idle countdown waits while it runs and
   * starts again when it ended, however it ended.
   */
  async #use<T>(signal: AbortSignal, fn: (client: Client) => Promise<T>): Promise<T> {
    this.#inflight++;
    this.#clearIdle();
    try {
      return await fn(await this.#ensure(signal));
    } finally {
      this.#inflight--;
      this.#armIdle();
    }
  }

  /**
   * The connected client: an idle server is started first (a call that finds it starting waits for
   * that start), within the handshake timeout and the call's `signal`.
   * @throws McpUnavailableError when it is not connected and cannot be now.
   */
  async #ensure(signal: AbortSignal): Promise<Client> {
    if (this.#state === "idle") {
      this.#state = "connecting";
      this.#onDemand = true;
      this.#log.info({}, "mcp server starting for a call");
      void this.#connect();
    }
    if (this.#state === "connecting" && this.#onDemand) {
      await untilAborted(this.ready(), signal);
    }
    // Read again: the start above may have changed it.
    const state = this.#state as McpServerState;
    if (state === "connected" && this.#client) return this.#client;
    const name = this.config.name;
    const why =
      state === "disabled"
        ? "it is disabled in config.yaml (enabled: false)"
        : state === "stopped"
          ? "it is stopped"
          : state === "connecting"
            ? "it is still connecting"
            : state === "idle"
              ? `it did not start${this.#error ? `: ${this.#error}` : ""}`
              : `it is restarting (attempt ${this.#attempts}${this.#error ? `; last error: ${this.#error}` : ""})`;
    throw new McpUnavailableError(name, `MCP server '${name}' is not available: ${why}. Try again shortly.`);
  }

  /**
   * Makes sure `tool` is on the server's list before calling it: a name missing from the list (it came
   * from the cache, or the list changed) lists again once. @throws McpToolGoneError when still missing.
   */
  async #checkListed(client: Client, tool: string): Promise<void> {
    if (this.#tools.some((t) => t.name === tool)) return;
    await this.#refreshTools(client);
    this.#deps.onToolsChanged(this.config.name);
    if (!this.#tools.some((t) => t.name === tool))
      throw new McpToolGoneError(
        this.config.name,
        tool,
        this.#tools.map((t) => t.name),
      );
  }

  /** Runs a request; a closed connection or a timeout becomes a clear McpUnavailableError. */
  async #guard<T>(
    client: Client,
    run: (signal: AbortSignal) => Promise<T>,
    signal: AbortSignal,
    what: string,
  ): Promise<T> {
    const name = this.config.name;
    // The SDK never removes the abort listener it adds per request: each call gets its own signal,
    // linked to the turn's only while the call runs, so a turn's signal does not collect listeners.
    const own = new AbortController();
    const forward = () => own.abort(signal.reason);
    if (signal.aborted) forward();
    else signal.addEventListener("abort", forward, { once: true });
    try {
      return await run(own.signal);
    } catch (err) {
      if (signal.aborted) throw signal.reason ?? err;
      const { McpError, ErrorCode } = await loadMcpClientSdk();
      if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed && this.#oversized === client)
        throw new McpMessageTooLargeError(name, MAX_MCP_MESSAGE_BYTES);
      if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed)
        throw new McpUnavailableError(
          name,
          `MCP server '${name}' stopped during ${what} (connection closed); ${this.#lazy ? "the next call starts it again" : "it is being restarted. Try again shortly"}.`,
          { cause: err },
        );
      // A remote server that went away (refused, reset, restarted with our session gone): reconnect.
      if (this.config.transport === "http" && (err instanceof TypeError || httpStatusOf(err) !== undefined)) {
        const reason = connectError(err, name);
        this.#lose(client, reason);
        throw new McpUnavailableError(
          name,
          `MCP server '${name}' could not be reached during ${what} (${reason}); ${this.#lazy ? "the next call connects again" : "reconnecting. Try again shortly"}.`,
          { cause: err },
        );
      }
      if (err instanceof McpError && err.code === ErrorCode.RequestTimeout)
        throw new McpUnavailableError(
          name,
          `MCP server '${name}' did not answer ${what} within ${this.config.timeoutMs / 1000} s (mcp_servers.${name}.timeout_s).`,
          { cause: err },
        );
      throw err;
    } finally {
      signal.removeEventListener("abort", forward);
    }
  }

  /** Whether the server runs only while used (`idleTimeoutMs` > 0). */
  get #lazy(): boolean {
    return (this.config.idleTimeoutMs ?? 0) > 0;
  }

  /** (Re)starts the idle countdown of a connected lazy server with no request running. */
  #armIdle(): void {
    this.#clearIdle();
    if (!this.#lazy || this.#inflight > 0 || this.#state !== "connected") return;
    this.#idleTimer = setTimeout(() => {
      this.#idleTimer = undefined;
      void this.#sleep();
    }, this.config.idleTimeoutMs);
    this.#idleTimer.unref();
  }

  #clearIdle(): void {
    if (this.#idleTimer) clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
  }

  /** Stops a connected server no call used for its idle timeout; it keeps its tools (state `idle`). */
  async #sleep(): Promise<void> {
    const client = this.#client;
    if (this.#state !== "connected" || this.#inflight > 0 || !client) return;
    this.#client = undefined;
    this.#transport = undefined;
    this.#state = "idle";
    this.#log.info({ idleTimeoutMs: this.config.idleTimeoutMs }, "mcp server stopped while idle");
    await client.close().catch(() => undefined);
  }

  /**
   * A connection that ended under a connected server: a lazy server turns `idle` (the next call starts
   * it again), any other restarts with backoff.
   */
  #ended(reason: string): void {
    this.#clearIdle();
    if (this.#lazy) {
      this.#state = "idle";
      this.#log.info({ reason }, "mcp server ended; the next call starts it again");
      return;
    }
    this.#error = reason;
    if (Date.now() - this.#connectedAt > STABLE_AFTER_MS) this.#attempts = 0;
    this.#retry();
  }

  async #connect(): Promise<void> {
    if (this.#state === "stopped" || this.#state === "disabled") return;
    const generation = this.#generation;
    const started = performance.now();
    let client: Client | undefined;
    try {
      const connected = await this.#open();
      client = connected.client;
      if (this.#stale(generation)) {
        await client.close().catch(() => undefined);
        return;
      }
      this.#client = client;
      this.#transport = connected.transport;
      this.#protocol = connected.protocol;
      await this.#refreshTools(client);
      if (this.#stale(generation)) {
        if (this.#stale(this.#generation)) this.#tools = [];
        await client.close().catch(() => undefined);
        return;
      }
      this.#state = "connected";
      this.#onDemand = false;
      this.#connectedAt = Date.now();
      this.#attempts = 0;
      this.#error = undefined;
      this.#armIdle();
      this.#log.info(
        { tools: this.#tools.length, ms: Math.round(performance.now() - started), transport: this.#protocol },
        "mcp server connected",
      );
      this.#deps.onToolsChanged(this.config.name);
      this.#wake();
    } catch (err) {
      if (client && this.#client === client) this.#client = undefined;
      await client?.close().catch(() => undefined);
      if (this.#stale(generation)) return;
      this.#error = connectError(err, this.config.name);
      if (this.#onDemand) {
        // Started by a call: that call fails with the reason, the next one tries again.
        this.#onDemand = false;
        this.#state = "idle";
        this.#log.warn({ error: this.#error }, "mcp server did not start for a call");
        this.#wake();
        return;
      }
      this.#retry();
    }
  }

  /** Builds the transport(s) and runs the handshake; a remote `auto` server falls back to SSE. */
  async #open(): Promise<{ client: Client; transport: Transport; protocol: McpServerStatus["transport"] }> {
    const config = this.config;
    const sdk = await loadMcpClientSdk();
    const { SSEClientTransport, StdioClientTransport, StreamableHTTPClientTransport } = sdk;
    const attempt = async (transport: Transport, protocol: McpServerStatus["transport"]) => {
      const client = this.#newClient(sdk);
      try {
        await client.connect(transport, { timeout: handshakeTimeoutMs(config.timeoutMs) });
      } catch (err) {
        await client.close().catch(() => undefined);
        throw err;
      }
      return { client, transport, protocol };
    };
    if (config.transport === "stdio") {
      const transport = new StdioClientTransport({
        command: config.command,
        args: config.args,
        env: config.env,
        ...(config.cwd ? { cwd: config.cwd } : {}),
        stderr: "pipe",
        maxBufferSize: MAX_MCP_MESSAGE_BYTES,
      });
      transport.stderr?.on("data", (chunk: Buffer) =>
        this.#log.debug({ stderr: chunk.toString("utf8").slice(0, 2000) }, "mcp server stderr"),
      );
      return attempt(transport, "stdio");
    }
    const url = new URL(config.url);
    const fetch = cappedFetch(config.name, { onTooLarge: () => this.#dropOversized() });
    const options = { requestInit: { headers: config.headers }, fetch };
    if (config.protocol === "sse") return attempt(new SSEClientTransport(url, options), "sse");
    try {
      return await attempt(new StreamableHTTPClientTransport(url, options), "streamable_http");
    } catch (err) {
      // A refusal of the credentials is not a sign of an older server: no SSE attempt then.
      if (config.protocol === "streamable_http" || isAuthRefusal(err)) throw err;
      this.#log.debug({ error: describeError(err) }, "streamable HTTP failed, trying SSE");
      return attempt(new SSEClientTransport(url, options), "sse");
    }
  }

  /** A message over the bound arrived: its calls fail with McpMessageTooLargeError, the connection restarts. */
  #dropOversized(): void {
    const client = this.#client;
    if (!client) return;
    this.#oversized = client;
    void client.close().catch(() => undefined);
  }

  #newClient(sdk: McpClientSdk): Client {
    const client: Client = new sdk.Client(
      { name: "herald", version: this.#deps.version ?? "0.0.0" },
      {
        capabilities: {},
        listChanged: {
          tools: {
            autoRefresh: false,
            debounceMs: 50,
            onChanged: () => {
              if (this.#client !== client || this.#state !== "connected") return;
              this.#refreshTools(client)
                .then(() => this.#deps.onToolsChanged(this.config.name))
                .catch((err: unknown) =>
                  this.#log.warn({ error: describeError(err) }, "mcp tool list refresh failed"),
                );
            },
          },
        },
      },
    );
    client.onclose = () => {
      if (this.#client !== client) return;
      this.#client = undefined;
      this.#transport = undefined;
      if (this.#state !== "connected") return;
      if (!this.#lazy) this.#log.warn({}, "mcp server connection closed; restarting");
      this.#ended("the server closed the connection (exited?)");
    };
    client.onerror = (err) => {
      // The stdio transport's own bound: it closes the connection, and the call sees only that.
      if (/ReadBuffer exceeded maximum size/.test(String(err))) this.#oversized = client;
      this.#log.debug({ error: describeError(err) }, "mcp transport error");
    };
    return client;
  }

  async #refreshTools(client: Client): Promise<void> {
    if (!client.getServerCapabilities()?.tools) {
      this.#tools = [];
      this.#deps.onListed?.(this.config.name, []);
      return;
    }
    const listed: SdkTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {}, {
        timeout: handshakeTimeoutMs(this.config.timeoutMs),
      });
      listed.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor && listed.length < 1000);
    const { include, exclude } = this.config;
    const unknown = [...include, ...exclude].filter((name) => !listed.some((t) => t.name === name));
    if (unknown.length > 0)
      this.#log.warn(
        { key: `mcp_servers.${this.config.name}.tools`, unknown, tools: listed.map((t) => t.name) },
        "mcp tools.include/exclude name tools the server does not have; check their spelling",
      );
    const tools = listed.map(
      (t): McpListedTool => ({
        name: t.name,
        description: t.description ?? t.title ?? t.name,
        inputSchema: t.inputSchema as Record<string, unknown>,
        readOnly: t.annotations?.readOnlyHint === true,
      }),
    );
    this.#tools = this.#filter(tools);
    this.#deps.onListed?.(this.config.name, tools);
  }

  /** `listed` after `tools.include`/`exclude`, as this server's tools. */
  #filter(listed: readonly McpListedTool[]): McpToolInfo[] {
    const { include, exclude } = this.config;
    return listed
      .filter((t) => (include.length === 0 || include.includes(t.name)) && !exclude.includes(t.name))
      .map((t) => ({ server: this.config.name, ...t }));
  }

  /** Drops a connection that failed under a request and schedules a reconnect (a lazy server's next call). */
  #lose(client: Client, reason: string): void {
    if (this.#client !== client || this.#state !== "connected") return;
    this.#client = undefined;
    this.#transport = undefined;
    if (!this.#lazy) this.#log.warn({ error: reason }, "mcp server unreachable; reconnecting");
    void client.close().catch(() => undefined);
    this.#ended(reason);
  }

  #retry(): void {
    this.#state = "retrying";
    this.#attempts++;
    const base = this.#deps.backoff?.baseMs ?? 1000;
    const max = this.#deps.backoff?.maxMs ?? 60_000;
    const delayMs = Math.min(max, base * 2 ** Math.min(this.#attempts - 1, 20));
    this.#log.warn(
      { attempt: this.#attempts, delayMs, error: this.#error },
      "mcp server unavailable; retrying",
    );
    this.#wake();
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#connect();
    }, delayMs);
    this.#timer.unref();
  }

  /** Whether `stop()` ran since an attempt of `generation` began (it then owns nothing it opened). */
  #stale(generation: number): boolean {
    return generation !== this.#generation || this.#state === "stopped";
  }

  #wake(): void {
    for (const w of [...this.#waiters]) w();
    this.#waiters.clear();
  }
}

/** Waits for `promise`, or throws the signal's reason once `signal` aborts first. */
async function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) throw signal.reason;
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, aborted]);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}
