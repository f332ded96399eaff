/**
 * Who may talk to the agent, and who is an owner: the one policy every path that sends elsewhere or
 * changes shared routing asks.
 *
 * Admission. Default deny: a user is admitted by `GATEWAY_ALLOW_ALL_USERS`, by an allowlist
 * (`GATEWAY_ALLOWED_USERS`, `<P>_ALLOWED_USERS`), by `GATEWAY_OWNERS`, or by an approved pairing code.
 * Unknown users in DMs get a pairing code; in groups they are ignored silently.
 *
 * Owners. The operator's own channels (the API server's key holder, the terminal, Herald's MCP server)
 * and the chat users the configuration names: those in `GATEWAY_OWNERS` when it is set, else those on
 * an allowlist. Users admitted by a pairing code or by `GATEWAY_ALLOW_ALL_USERS` are never owners. An
 * owner may deliver anywhere (another chat, a home channel) and run owner-only commands; anyone else
 * delivers only to its own chat. A cron run acts as the user who made its job (a job added on the
 * command line, as the owner); a webhook delivery acts as nobody (its input comes from outside).
 *
 * Bot accounts. A platform's further bot account (`telegram@family`) has its own section (inheriting
 * the platform's `allowed_users` unless it sets its own) and its own pairing approvals; a global
 * `platform:id` entry (`GATEWAY_OWNERS=telegram:1`) names that user on every account of the platform.
 */
import type { Caller, DeliveryRule, Principal } from "../core/access.js";
import { basePlatform, formatChat, sameChat } from "../core/chat.js";
import { HeraldError } from "../core/errors.js";
import type { ChatRef, InboundMessage } from "../core/types.js";
import type { PairingStore } from "../sessions/types.js";
import type { RunnerSettings } from "./types.js";

/** Channels whose callers are authenticated before the runner sees them (API key; the local terminal). */
const PRE_AUTHENTICATED = new Set(["api", "cli", "cron"]);

/** The operator's own channels: their callers are the owner. */
const OPERATOR_CHANNELS = new Set(["api", "cli", "mcp"]);

/** Chats without people: who their callers act for is resolved (cron), or nobody (webhooks). */
const UNPEOPLED = new Set(["cron", "webhook"]);

export type AccessDecision = "allowed" | "pairing" | "denied";

/** How each platform's user ids compare (by platform name); others compare trimmed. */
export type UserIdNormalisers = Readonly<Record<string, ((id: string) => string) | undefined>>;

/** Who a caller of a chat without people acts for (a cron run: its job's creator). Must not throw. */
export type PrincipalResolver = (chat: ChatRef) => Principal;

/**
 * Decides access and owner rights from config and pairing state. An allowlist or owners entry is
 * either a bare user id (for the platform's own list) or `platform:userId` (in the global lists).
 */
export class AccessPolicy implements DeliveryRule {
  private readonly known: ReadonlySet<string>;
  private readonly resolvers = new Map<string, PrincipalResolver>();

  constructor(
    private readonly settings: Pick<RunnerSettings, "access" | "platforms">,
    private readonly pairing: PairingStore,
    private readonly normalisers: UserIdNormalisers = {},
  ) {
    this.known = new Set([...Object.keys(settings.platforms), ...PRE_AUTHENTICATED, ...OPERATOR_CHANNELS]);
  }

  /** Whether the sender of `message` may start a turn, needs a pairing code, or is ignored. */
  decide(message: InboundMessage): AccessDecision {
    if (this.isAllowed(message.platform, message.sender.id)) return "allowed";
    return message.chatType === "dm" ? "pairing" : "denied";
  }

  /** Whether `userId` of `platform` may talk to the agent. */
  isAllowed(platform: string, userId: string): boolean {
    if (PRE_AUTHENTICATED.has(platform)) return true;
    if (this.settings.access.allowAllUsers) return true;
    if (this.onAllowlist(platform, userId)) return true;
    if (this.listed(this.settings.access.owners ?? [], platform, userId)) return true;
    const id = this.norm(platform, userId);
    return this.pairing.isApproved(platform, id) || this.pairing.isApproved(platform, userId);
  }

  /**
   * Whether `userId` of `platform` is an owner: a caller of the operator's channels (`api`, `cli`,
   * `mcp`), or a user the configuration names (`GATEWAY_OWNERS` when set, else the allowlists).
   */
  isOwner(platform: string, userId: string): boolean {
    if (OPERATOR_CHANNELS.has(platform)) return true;
    if (UNPEOPLED.has(platform)) return false;
    const owners = this.settings.access.owners ?? [];
    if (owners.length > 0) return this.listed(owners, platform, userId);
    return this.onAllowlist(platform, userId);
  }

  /** Says who the callers of a chat without people (`cron`) act for. Call once per platform, at start. */
  resolvePrincipals(platform: string, resolve: PrincipalResolver): void {
    this.resolvers.set(platform, resolve);
  }

  /** Who `caller` acts for: the owner, nobody, or a user in a chat (itself, or a cron job's creator). */
  principalOf(caller: Caller): Principal {
    const { platform } = caller.chat;
    if (OPERATOR_CHANNELS.has(platform)) return "owner";
    if (!UNPEOPLED.has(platform)) return caller;
    return this.resolvers.get(platform)?.(caller.chat) ?? "nobody";
  }

  /** Whether `caller` has an owner's rights (see {@link principalOf}). */
  callerIsOwner(caller: Caller): boolean {
    const principal = this.principalOf(caller);
    if (principal === "owner") return true;
    if (principal === "nobody") return false;
    return this.isOwner(principal.chat.platform, principal.userId);
  }

  mayDeliver(caller: Caller, to: ChatRef | undefined): boolean {
    if (this.callerIsOwner(caller)) return true;
    if (!to) return false;
    const principal = this.principalOf(caller);
    return sameChat(to, caller.chat) || (typeof principal === "object" && sameChat(to, principal.chat));
  }

  checkDelivery(caller: Caller, target: string, to: ChatRef | undefined): void {
    if (this.mayDeliver(caller, to)) return;
    const where = to ? formatChat(to) : `${target}, a home channel`;
    throw new HeraldError(
      `only the owner may send to another chat (${where}); this conversation can only send to itself (target "origin")`,
      { code: "unauthorized" },
    );
  }

  /** `userId` as its platform compares ids (trimmed; a platform's own rule where it has one). */
  normaliseUserId(platform: string, userId: string): string {
    return this.norm(platform, userId);
  }

  private norm(platform: string, raw: string): string {
    const rule = this.normalisers[platform] ?? this.normalisers[basePlatform(platform)];
    return (rule ?? ((s: string) => s))(raw.trim());
  }

  /** Whether the user is on its platform's allowlist or the global one. */
  private onAllowlist(platform: string, userId: string): boolean {
    const id = this.norm(platform, userId);
    if (this.settings.platforms[platform]?.allowedUsers.some((u) => this.norm(platform, u) === id))
      return true;
    return this.listed(this.settings.access.allowedUsers, platform, userId);
  }

  /** Whether `userId` of `platform` is named in `entries` (`platform:id` or a bare id). */
  private listed(entries: readonly string[], platform: string, userId: string): boolean {
    const id = this.norm(platform, userId);
    for (const entry of entries) {
      // `platform:id`, or a bare id (which may itself hold colons: Matrix's `@alice:example.org`).
      const colon = entry.indexOf(":");
      const prefix = colon > 0 ? entry.slice(0, colon) : "";
      // `telegram:1` names the same person on every bot account of Telegram (`telegram@family`).
      if (prefix === platform || (prefix && prefix === basePlatform(platform))) {
        if (this.norm(platform, entry.slice(colon + 1)) === id) return true;
        continue;
      }
      if (this.known.has(prefix)) continue;
      if (this.norm(platform, entry) === id) return true;
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
