/**
 * The MCP servers of one process: starts them in the background (nothing waits for them), stops them,
 * reloads them, and tells listeners when a server's tools changed. With a tool cache, a server that
 * stops when idle and has a fresh cached list is not started: its cached tools are offered, and its
 * first call starts it; every list a server gives is cached.
 */
import { describeError } from "../../../core/errors.js";
import { type Logger, silentLogger } from "../../../core/logger.js";
import { definitionHash, isFresh, type McpListedTool, type McpToolCacheApi } from "./cache.js";
import { type McpBackoff, McpConnection } from "./connection.js";
import type { McpServerConfig, McpServerHandle, McpServerStatus, McpToolInfo } from "./types.js";

export interface McpManagerOptions {
  servers: readonly McpServerConfig[];
  logger: Logger;
  backoff?: McpBackoff | undefined;
  version?: string | undefined;
  /** Where the servers' tool lists are cached; undefined: every enabled server starts with `start()`. */
  cache?: McpToolCacheApi | undefined;
}

/** Every configured server, by name. `start`/`stop` are an idempotent pair. */
export class McpManager {
  #servers = new Map<string, McpConnection>();
  readonly #options: McpManagerOptions;
  /** Called with a server's name after its tools changed (connected, refreshed, stopped). Must not throw. */
  readonly toolsChanged = new Set<(server: string) => void>();
  #started = false;
  /** Counts `stop()` calls: a reload that sees another stop begin while it stopped starts nothing. */
  #stops = 0;
  /** The cache lookups of the latest start: `ready()` waits for them. */
  #starting: Promise<void> = Promise.resolve();

  constructor(options: McpManagerOptions) {
    this.#options = options;
    this.#build(options.servers);
  }

  /**
   * Starts connecting every enabled server, except those whose fresh cached list is offered instead
   * (they start on their first call); returns at once. Stdio servers start 25 ms apart, so the process
   * answers its own requests between the spawns (each blocks the thread while it forks).
   */
  start(): void {
    this.#started = true;
    this.#starting = this.#startAll(this.#options.cache);
  }

  async #startAll(cache: McpToolCacheApi | undefined): Promise<void> {
    const stops = this.#stops;
    const servers = [...this.#servers.values()];
    const offered = new Set<McpConnection>();
    if (cache) {
      const lazy = servers.filter((s) => s.config.enabled && (s.config.idleTimeoutMs ?? 0) > 0);
      await Promise.all(
        lazy.map(async (server) => {
          const name = server.config.name;
          try {
            const entry = await cache.get(name, definitionHash(server.config));
            if (this.#stops === stops && isFresh(entry) && server.offer(entry.tools)) {
              offered.add(server);
              this.#options.logger.info(
                { server: name, tools: entry.tools.length },
                "mcp server idle until used",
              );
              this.#emit(name);
            }
          } catch (err) {
            this.#options.logger.warn(
              { server: name, error: describeError(err) },
              "mcp tool cache unreadable",
            );
          }
        }),
      );
      // A stop (or reload) began during the lookups: it decides what runs.
      if (this.#stops !== stops) return;
    }
    let spawns = 0;
    for (const server of servers) {
      if (offered.has(server)) continue;
      server.start(server.config.transport === "stdio" && server.config.enabled ? 25 * spawns++ : 0);
    }
  }

  /** Closes every connection (stdio children end). */
  async stop(): Promise<void> {
    this.#stops++;
    this.#started = false;
    const servers = [...this.#servers.values()];
    await Promise.all(servers.map((s) => s.stop()));
    for (const s of servers) this.#emit(s.config.name);
  }

  /**
   * Stops every server and starts them again, with `servers` when given (a re-read config.yaml);
   * resolves when each has connected or failed its first attempt. A `stop()` or another reload begun
   * while this one stopped the servers wins: this one then starts nothing and resolves with the status.
   */
  async reload(servers?: readonly McpServerConfig[]): Promise<McpServerStatus[]> {
    const stopping = this.stop();
    const stops = this.#stops;
    await stopping;
    // Else the process closing (or a newer reload) would find servers started behind its back.
    if (this.#stops !== stops) return this.status();
    if (servers) {
      const gone = [...this.#servers.keys()].filter((name) => !servers.some((s) => s.name === name));
      this.#build(servers);
      for (const name of gone) this.#emit(name);
    }
    // Every server starts and lists again (the cache is not consulted); the idle ones stop later.
    this.#started = true;
    this.#starting = this.#startAll(undefined);
    return this.ready();
  }

  /** Waits until every server's first attempt settled (or its timeout passed); idle servers are settled. */
  async ready(): Promise<McpServerStatus[]> {
    await this.#starting;
    return Promise.all([...this.#servers.values()].map((s) => s.ready()));
  }

  get(name: string): McpServerHandle | undefined {
    return this.#servers.get(name);
  }

  /** Every server, in config order. */
  servers(): McpServerHandle[] {
    return [...this.#servers.values()];
  }

  status(): McpServerStatus[] {
    return [...this.#servers.values()].map((s) => s.status());
  }

  /** Every server's tools now. */
  tools(): McpToolInfo[] {
    return [...this.#servers.values()].flatMap((s) => s.tools());
  }

  #build(servers: readonly McpServerConfig[]): void {
    this.#servers = new Map(
      servers.map((config) => [
        config.name,
        new McpConnection(config, {
          logger: this.#options.logger,
          backoff: this.#options.backoff,
          version: this.#options.version,
          onToolsChanged: (name) => this.#emit(name),
          onListed: (_server, tools) => this.#cacheList(config, tools),
        }),
      ]),
    );
    if (this.#started) this.start();
  }

  /** Stores a server's list; a failure costs only the next start's laziness. */
  #cacheList(config: McpServerConfig, tools: McpListedTool[]): void {
    this.#options.cache
      ?.put(config.name, definitionHash(config), tools)
      .catch((err: unknown) =>
        this.#options.logger.warn(
          { server: config.name, error: describeError(err) },
          "mcp tool list not cached",
        ),
      );
  }

  #emit(server: string): void {
    for (const listener of this.toolsChanged) {
      try {
        listener(server);
      } catch (err) {
        this.#options.logger.warn({ server, err: String(err) }, "mcp tools listener threw");
      }
    }
  }
}

/**
 * Connects to `servers` from this process (only the enabled ones start), waits for each first attempt,
 * runs `fn`, and stops them: the checks of `herald mcp` and `herald doctor`, beside a running gateway's
 * own connections.
 */
export async function withMcpServers<T>(
  servers: McpServerConfig[],
  fn: (manager: McpManager) => Promise<T>,
): Promise<T> {
  const manager = new McpManager({ servers, logger: silentLogger(), backoff: { baseMs: 60_000 } });
  manager.start();
  try {
    await manager.ready();
    return await fn(manager);
  } finally {
    await manager.stop();
  }
}
