/**
 * Who may talk to the agent. Default deny: a user is admitted by `GATEWAY_ALLOW_ALL_USERS`, by an
 * allowlist (`GATEWAY_ALLOWED_USERS`, `<P>_ALLOWED_USERS`), or by an approved pairing code. Unknown users
 * in DMs get a pairing code; in groups they are ignored silently.
 */

import type { HeraldConfig } from "../app/config.js";
import type { InboundMessage } from "../core/types.js";
import type { PairingStore } from "../sessions/types.js";

/** Platforms whose callers are authenticated before the runner sees them (API key; the local terminal). */
const PRE_AUTHENTICATED = new Set(["api", "cli", "cron"]);

/** Platform prefixes recognised in `GATEWAY_ALLOWED_USERS` entries. */
const KNOWN_PLATFORMS = new Set([
  "telegram",
  "discord",
  "slack",
  "whatsapp",
  "matrix",
  "email",
  "api",
  "cli",
]);

export type AccessDecision = "allowed" | "pairing" | "denied";

/** Lowercases email addresses and strips a leading `@` or `+` so lists match what platforms send. */
function normaliseId(platform: string, id: string): string {
  const trimmed = id.trim();
  if (platform === "email") return trimmed.toLowerCase();
  if (platform === "whatsapp") return trimmed.replace(/^\+/, "").replace(/@.*$/, "");
  return trimmed;
}

/**
 * Decides access from config and pairing state. An allowlist entry is either a bare user id (for the
 * platform's own list) or `platform:userId` (in the global list).
 */
export class AccessPolicy {
  constructor(
    private readonly config: HeraldConfig,
    private readonly pairing: PairingStore,
  ) {}

  /** Whether the sender of `message` may start a turn, needs a pairing code, or is ignored. */
  decide(message: InboundMessage): AccessDecision {
    if (this.isAllowed(message.platform, message.sender.id)) return "allowed";
    return message.chatType === "dm" ? "pairing" : "denied";
  }

  isAllowed(platform: string, userId: string): boolean {
    if (PRE_AUTHENTICATED.has(platform)) return true;
    if (this.config.access.allowAllUsers) return true;
    const id = normaliseId(platform, userId);
    const section = (this.config as unknown as Record<string, { allowedUsers?: string[] } | undefined>)[
      platform
    ];
    if (section?.allowedUsers?.some((u) => normaliseId(platform, u) === id)) return true;
    for (const entry of this.config.access.allowedUsers) {
      // `platform:id`, or a bare id (which may itself hold colons: Matrix's `@alice:example.org`).
      const colon = entry.indexOf(":");
      const prefix = colon > 0 ? entry.slice(0, colon) : "";
      if (prefix === platform) {
        if (normaliseId(platform, entry.slice(colon + 1)) === id) return true;
        continue;
      }
      if (KNOWN_PLATFORMS.has(prefix)) continue;
      if (normaliseId(platform, entry) === id) return true;
    }
    return this.pairing.isApproved(platform, id) || this.pairing.isApproved(platform, userId);
  }
}

/** The text an unknown DM user gets with their code. */
export function pairingText(code: string, expiresAt: number, now: number): string {
  const minutes = Math.max(1, Math.round((expiresAt - now) / 60_000));
  return [
    "Hi! I only talk to people my owner has approved.",
    `Your pairing code is **${code}** (valid for ${minutes} minutes).`,
    `Ask the owner to run: \`herald pairing approve ${code}\``,
  ].join("\n");
}
