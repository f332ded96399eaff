/**
 * The ids Herald gives providers: stable (the same user or session key gives the same id in every
 * process and after every restart), readable, unique by a hash of the exact value, and within the
 * characters Honcho accepts (`[A-Za-z0-9_-]`, at most 512), which Mem0 accepts too.
 */
import { createHash } from "node:crypto";

function hashOf(...parts: string[]): string {
  return createHash("sha256").update(parts.join("\u0000")).digest("hex").slice(0, 12);
}

const safe = (text: string, max: number) => text.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, max);

/** A user's id at the provider: `<platform>-<readable id>-<hash>`, e.g. `telegram-42-1f0c9a7be2d1`. */
export function userPeerId(platform: string, userId: string): string {
  return `${safe(platform, 24)}-${safe(userId, 40)}-${hashOf(platform, userId)}`;
}

/** A Herald session key's id at the provider: `herald-<readable key>-<hash>`. */
export function sessionIdOf(sessionKey: string): string {
  return `herald-${safe(sessionKey, 80)}-${hashOf(sessionKey)}`;
}

/**
 * A provider-side name of one agent's: the configured `name` for the default agent (undefined), else
 * `<name>-<agent>` (workspace `herald` → `herald-family`). Agent names are lowercase letters, digits,
 * `-` and `_`, so the result stays within Honcho's characters.
 */
export function agentScoped(name: string, agent: string | undefined): string {
  return agent ? `${name}-${agent}` : name;
}
