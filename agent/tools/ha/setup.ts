/**
 * The `ha` toolset of one process: its tools on one `HaClient` when `ha.url` and `ha.token` are set,
 * none otherwise (the toolset is simply not offered).
 */
import type { Logger } from "../../../core/logger.js";
import type { Tool } from "../../types.js";
import { haTools } from "./declaration.js";
import type { HaSection } from "./settings.js";

/** The settings the toolset reads (`HeraldConfig` has this shape). */
export interface HaToolSettings {
  ha: HaSection;
  exec: { dangerousCommands: "manual" | "deny" | "off" };
}

/** The toolset's tools, and closing its connection. */
export interface HaToolset {
  tools: Tool[];
  close(): void;
}

/** Builds the `ha` toolset from the config (no tools, and no client loaded, without an address and a token). */
export async function createHaTools(config: HaToolSettings, ports: { logger: Logger }): Promise<HaToolset> {
  const { url, token, timeoutMs, approve } = config.ha;
  if (!url || !token) return { tools: [], close: () => undefined };
  // The client (and its WebSocket library) loads only where Home Assistant is configured.
  const { HaClient } = await import("./client.js");
  const client = new HaClient({
    url: url.replace(/\/+$/, ""),
    token,
    timeoutMs,
    logger: ports.logger.child({ component: "ha" }),
  });
  return {
    tools: haTools({ client, approve, approvalMode: config.exec.dangerousCommands }),
    close: () => client.close(),
  };
}
