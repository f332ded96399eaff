/**
 * Who may talk to the agent. Default deny: a user is admitted by `GATEWAY_ALLOW_ALL_USERS`, by an
 * allowlist (`GATEWAY_ALLOWED_USERS`, `<P>_ALLOWED_USERS`), or by an approved pairing code. Unknown users
 * in DMs get a pairing code; in groups they are ignored silently.
 */
import type { InboundMessage } from "../core/types.js";
import type { PairingStore } from "../sessions/types.js";
import type { RunnerSettings } from "./types.js";

/** Channels whose callers are authenticated before the runner sees them (API key; the local terminal). */
const PRE_AUTHENTICATED = new Set(["api", "cli", "cron"]);

export type AccessDecision = "allowed" | "pairing" | "denied";

/** How each platform's user ids compare (by platform name); others compare trimmed. */
export type UserIdNormalisers = Readonly<Record<string, ((id: string) => string) | undefined>>;

/**
 * Decides access from config and pairing state. An allowlist entry is either a bare user id (for the
 * platform's own list) or `platform:userId` (in the global list).
 */
export class AccessPolicy {
  private readonly known: ReadonlySet<string>;

  constructor(
    private readonly settings: Pick<RunnerSettings, "access" | "platforms">,
    private readonly pairing: PairingStore,
    private readonly normalisers: UserIdNormalisers = {},
  ) {
    this.known = new Set([...Object.keys(settings.platforms), ...PRE_AUTHENTICATED]);
  }

  /** Whether the sender of `message` may start a turn, needs a pairing code, or is ignored. */
  decide(message: InboundMessage): AccessDecision {
    if (this.isAllowed(message.platform, message.sender.id)) return "allowed";
    return message.chatType === "dm" ? "pairing" : "denied";
  }

  isAllowed(platform: string, userId: string): boolean {
    if (PRE_AUTHENTICATED.has(platform)) return true;
    if (this.settings.access.allowAllUsers) return true;
    const norm = (raw: string) => (this.normalisers[platform] ?? ((s: string) => s))(raw.trim());
    const id = norm(userId);
    if (this.settings.platforms[platform]?.allowedUsers.some((u) => norm(u) === id)) return true;
    if (this.listed(this.settings.access.allowedUsers, platform, userId)) return true;
    return this.pairing.isApproved(platform, id) || this.pairing.isApproved(platform, userId);
  }

  /**
   * Whether the user is an owner: named in `access.owners` (`GATEWAY_OWNERS`, `platform:id` or a bare
   * id), or a caller of a pre-authenticated channel (the API key's holder, the local terminal).
   */
  isOwner(platform: string, userId: string): boolean {
    if (PRE_AUTHENTICATED.has(platform) && platform !== "cron") return true;
    return this.listed(this.settings.access.owners ?? [], platform, userId);
  }

  /** Whether `userId` of `platform` is named in `entries` (`platform:id` or a bare id). */
  private listed(entries: readonly string[], platform: string, userId: string): boolean {
    const norm = (raw: string) => (this.normalisers[platform] ?? ((s: string) => s))(raw.trim());
    const id = norm(userId);
    for (const entry of entries) {
      // `platform:id`, or a bare id (which may itself hold colons: Matrix's `@alice:example.org`).
      const colon = entry.indexOf(":");
      const prefix = colon > 0 ? entry.slice(0, colon) : "";
      if (prefix === platform) {
        if (norm(entry.slice(colon + 1)) === id) return true;
        continue;
      }
      if (this.known.has(prefix)) continue;
      if (norm(entry) === id) return true;
    }
    return false;
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
