/**
 * The owner rule as the paths that send elsewhere or change shared routing see it. The gateway's
 * `AccessPolicy` implements it; features that deliver (cron, `send_message`, Herald's MCP server) are
 * handed it by the composition root, so one rule decides everywhere.
 */
import { agentOfKey } from "./chat.js";
import type { ChatRef } from "./types.js";

/** Who asks: the chat a turn, command or tool call comes from, and the user it acts for there. */
export interface Caller {
  chat: ChatRef;
  userId: string;
  /** The agent it talks to (`agents:`); undefined for the default agent. Memory is each agent's own. */
  agent?: string | undefined;
}

/** The caller of a turn's origin: its chat, its user, and the agent its session key names. */
export function callerOfOrigin(origin: { chat: ChatRef; userId: string; sessionKey: string }): Caller {
  const agent = agentOfKey(origin.sessionKey);
  return agent
    ? { chat: origin.chat, userId: origin.userId, agent }
    : { chat: origin.chat, userId: origin.userId };
}

/**
 * Who a caller acts for: the owner (the operator's own channels: the API server's key holder, the
 * terminal, Herald's MCP server, a job added on the command line), nobody (a webhook delivery: its
 * input comes from outside), or a user in a chat (a cron run acts as the user who made its job).
 */
export type Principal = "owner" | "nobody" | Caller;

/** Owners deliver anywhere; everyone else only to its own chat. */
export interface DeliveryRule {
  /**
   * Whether `caller` may deliver to `to`. `to` undefined is a target that names no fixed chat (a
   * platform's home channel in a job: it may change before the job runs): only owners may.
   */
  mayDeliver(caller: Caller, to: ChatRef | undefined): boolean;
  /**
   * Throws unless `caller` may deliver to `to`; `target` is the target as the caller wrote it, for the
   * message. @throws HeraldError `unauthorized` saying that only the owner may, and what the caller may.
   */
  checkDelivery(caller: Caller, target: string, to: ChatRef | undefined): void;
}
