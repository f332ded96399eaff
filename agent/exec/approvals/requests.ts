/**
 * Approval requests: a dangerous command the agent wants to run waits here for the user's answer, with
 * the tool call that holds it and the rest of its step, so the answer resumes the turn where it stopped
 * (`TurnResume`): on approval Herald runs that call itself. One pending request per session at a time
 * (a newer one replaces it); an approved command may run once, exactly as approved; "always" grants
 * its rules for the rest of the session. Kept in a key-value namespace of the gateway's state, so a
 * restart neither loses a request nor runs anything.
 */
import { randomUUID } from "node:crypto";
import type { TurnResume } from "../../../core/turn.js";
import type { ChatMessage, ChatRef, KeyValueStore, OutboundButton, ToolCall } from "../../../core/types.js";

/** What a tool that cannot run a call without approval says about it (`ToolOutput.approval`). */
export interface ApprovalAsk {
  /** What would run: a command line, or the text written to a process. An approval matches it exactly. */
  command: string;
  /** The first rule it matched (named first in the prompt). */
  ruleId: string;
  ruleDescription: string;
  /** Every rule it matched: "always" grants them all. @defaultValue [ruleId] */
  ruleIds?: string[] | undefined;
  /** Where `command` goes when it is not run as a command line ("the stdin of background process p3"). */
  target?: string | undefined;
}

/** A request as the agent loop records it: the ask, who asked, and the held call. */
export interface ApprovalRequest extends ApprovalAsk {
  sessionKey: string;
  sessionId: string;
  chat: ChatRef;
  /** Who asked: in groups only they may answer. */
  userId: string;
  /** The held tool call, which Herald runs on approval. */
  call?: ToolCall | undefined;
  /** The step the call was held in (see `TurnResume.step`). */
  step?: ChatMessage[] | undefined;
}

/** A request as kept. */
export interface PendingApproval extends ApprovalRequest {
  id: string;
  createdAt: number;
  expiresAt: number;
}

/** What the tools and the agent loop (anywhere: over the state API on Redis) may do with approvals. */
export interface ApprovalsStateApi {
  /**
   * Whether `command` may run now in this session: true once for exactly an approved command (the
   * approval is then used up), and for any command whose rules (`ruleIds`, all of them) were granted
   * "always".
   */
  check(sessionKey: string, command: string, ruleIds: string[]): Promise<boolean>;
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

/** The rules a request matched. */
export function ruleIdsOf(ask: Pick<ApprovalAsk, "ruleId" | "ruleIds">): string[] {
  return ask.ruleIds?.length ? ask.ruleIds : [ask.ruleId];
}

/**
 * The turn that resumes `pending` after its answer, or undefined for a request recorded without its
 * call (by an older release: the agent is then told in words).
 */
export function resumeOf(
  pending: PendingApproval,
  answer: TurnResume["answer"],
  by: string,
): TurnResume | undefined {
  if (!pending.call) return undefined;
  return { approvalId: pending.id, answer, by, call: pending.call, step: pending.step };
}

/** What a resumed turn's journal says it answers (its input, shown where turns are listed). */
export function answerText(pending: PendingApproval, answer: TurnResume["answer"], by: string): string {
  const verb = answer === "approved" ? "approved" : answer === "denied" ? "denied" : "did not answer";
  return `[${by} ${verb}: ${pending.command}]`;
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

  /** Approves the pending request (for this command once, or its rules for the session). */
  approve(sessionKey: string, always: boolean): PendingApproval | undefined {
    const entry = this.read(sessionKey);
    const pending = entry.pending;
    if (!pending) return undefined;
    const granted = always ? ruleIdsOf(pending).filter((id) => !entry.always.includes(id)) : [];
    this.write(sessionKey, { approved: pending.command, always: [...entry.always, ...granted] });
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
  check(sessionKey: string, command: string, ruleIds: string[]): boolean {
    const entry = this.read(sessionKey);
    if (ruleIds.length > 0 && ruleIds.every((id) => entry.always.includes(id))) return true;
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
  request: Pick<PendingApproval, "command" | "ruleDescription" | "expiresAt" | "createdAt" | "target">,
): string {
  const minutes = Math.max(1, Math.round((request.expiresAt - request.createdAt) / 60_000));
  const what = request.target ? `to write to ${request.target}, which` : "to run a command that";
  return [
    `⚠️ I want ${what} needs your approval (${request.ruleDescription}):`,
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
