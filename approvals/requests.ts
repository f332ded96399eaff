/**
 * Approval requests: a dangerous command the agent wants to run waits here for the user's answer.
 * One pending request per session at a time (a newer one replaces it); an approved command may run
 * once, exactly as approved; "always" grants a rule for the rest of the session. Kept in a key-value
 * namespace of the gateway's state, so a restart neither loses a request nor runs anything.
 */
import { randomUUID } from "node:crypto";
import type { ChatRef, KeyValueStore, OutboundButton } from "../core/types.js";

/** What the terminal tool asks for. */
export interface ApprovalRequest {
  sessionKey: string;
  sessionId: string;
  chat: ChatRef;
  /** Who asked: in groups only they may answer. */
  userId: string;
  command: string;
  ruleId: string;
  ruleDescription: string;
}

/** A request as kept. */
export interface PendingApproval extends ApprovalRequest {
  id: string;
  createdAt: number;
  expiresAt: number;
}

/** What the terminal tool (anywhere: over the state API on Redis) may do with approvals. */
export interface ApprovalsStateApi {
  /**
   * Whether `command` may run now in this session: true once for exactly an approved command (the
   * approval is then used up), and for any command of a rule granted "always".
   */
  check(sessionKey: string, command: string, ruleId: string): Promise<boolean>;
  /** Records a request (replacing the session's older one); the caller asks the user. */
  request(request: ApprovalRequest): Promise<{ id: string; expiresAt: number }>;
}

interface SessionApprovals {
  pending?: PendingApproval | undefined;
  /** An approved command that may run once. */
  approved?: string | undefined;
  /** Rules granted for the rest of the session. */
  always: string[];
}

const INDEX = "index";

/** Approval requests over a key-value namespace. Synchronous: commands run inside the inbound transaction. */
export class ApprovalStore {
  constructor(
    private readonly kv: KeyValueStore,
    /** How long a request waits for an answer. */
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records a request, replacing the session's pending one. */
  request(request: ApprovalRequest): PendingApproval {
    const createdAt = this.now();
    const pending: PendingApproval = {
      ...request,
      id: randomUUID(),
      createdAt,
      expiresAt: createdAt + this.ttlMs,
    };
    const entry = this.read(request.sessionKey);
    this.write(request.sessionKey, { ...entry, pending });
    this.index(request.sessionKey, true);
    return pending;
  }

  /** The session's pending request, expired or not. */
  pending(sessionKey: string): PendingApproval | undefined {
    return this.read(sessionKey).pending;
  }

  /** Approves the pending request (for this command once, or its rule for the session). */
  approve(sessionKey: string, always: boolean): PendingApproval | undefined {
    const entry = this.read(sessionKey);
    const pending = entry.pending;
    if (!pending) return undefined;
    const rules =
      always && !entry.always.includes(pending.ruleId) ? [...entry.always, pending.ruleId] : entry.always;
    this.write(sessionKey, { approved: pending.command, always: rules });
    this.index(sessionKey, false);
    return pending;
  }

  /** Drops the pending request (denied, stopped, lapsed); returns it. */
  drop(sessionKey: string): PendingApproval | undefined {
    const entry = this.read(sessionKey);
    if (!entry.pending) return undefined;
    this.write(sessionKey, { ...entry, pending: undefined });
    this.index(sessionKey, false);
    return entry.pending;
  }

  /** See {@link ApprovalsStateApi.check}. */
  check(sessionKey: string, command: string, ruleId: string): boolean {
    const entry = this.read(sessionKey);
    if (entry.always.includes(ruleId)) return true;
    if (entry.approved !== command) return false;
    this.write(sessionKey, { ...entry, approved: undefined });
    return true;
  }

  /** Every pending request (restart: ask again, or tell that it lapsed). */
  all(): PendingApproval[] {
    return this.keys().flatMap((key) => this.read(key).pending ?? []);
  }

  /** Forgets a session's approvals (it ended). */
  forget(sessionKey: string): void {
    this.kv.delete(`s:${sessionKey}`);
    this.index(sessionKey, false);
  }

  private read(sessionKey: string): SessionApprovals {
    const raw = this.kv.get(`s:${sessionKey}`);
    return raw ? (JSON.parse(raw) as SessionApprovals) : { always: [] };
  }

  private write(sessionKey: string, entry: SessionApprovals): void {
    this.kv.set(`s:${sessionKey}`, JSON.stringify(entry));
  }

  private keys(): string[] {
    const raw = this.kv.get(INDEX);
    return raw ? (JSON.parse(raw) as string[]) : [];
  }

  private index(sessionKey: string, pending: boolean): void {
    const keys = new Set(this.keys());
    if (pending === keys.has(sessionKey)) return;
    if (pending) keys.add(sessionKey);
    else keys.delete(sessionKey);
    this.kv.set(INDEX, JSON.stringify([...keys]));
  }
}

/** What the chat shows for a request. */
export function approvalPrompt(
  request: Pick<PendingApproval, "command" | "ruleDescription" | "expiresAt" | "createdAt">,
): string {
  const minutes = Math.max(1, Math.round((request.expiresAt - request.createdAt) / 60_000));
  return [
    `⚠️ I want to run a command that needs your approval (${request.ruleDescription}):`,
    "```",
    request.command,
    "```",
    `Reply /approve to run it once, /approve always to allow commands like it for this session, or /deny. The request lapses in ${minutes} minute${minutes === 1 ? "" : "s"}.`,
  ].join("\n");
}

/** The short form of a request id that buttons carry (`/approve 3f2a1b2c`): its first 8 characters. */
export function shortRequestId(id: string): string {
  return id.replaceAll("-", "").slice(0, 8);
}

/** What one of the request's buttons sends: finds its prompt among the delivered ones. */
export function approvalButtonData(id: string): string {
  return `/deny ${shortRequestId(id)}`;
}

/**
 * The buttons under a request's prompt: Approve, Always, Deny. Each names the request, so a click on
 * an old prompt never answers a newer request.
 */
export function approvalButtons(id: string): OutboundButton[][] {
  const ref = shortRequestId(id);
  return [
    [
      { label: "✅ Approve", data: `/approve ${ref}` },
      { label: "♾️ Always", data: `/approve always ${ref}` },
      { label: "❌ Deny", data: approvalButtonData(id) },
    ],
  ];
}
