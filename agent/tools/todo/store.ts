/**
 * The agent's plans, one per session key, in a key-value namespace of the gateway's state (outside the
 * session's messages: compression never touches them, and they survive restarts). Synchronous, like
 * the approvals store: `/todo` reads it inside the inbound transaction.
 */

import type { KeyValueStore } from "../../../core/types.js";
import type { TodoItem } from "../../types.js";

/** Most items a plan holds. */
export const MAX_TODO_ITEMS = 100;

/** Plans over a key-value namespace. */
export class TodoStore {
  constructor(private readonly kv: KeyValueStore) {}

  /** The session's items in order; empty when it has none. */
  get(sessionKey: string): TodoItem[] {
    const raw = this.kv.get(`s:${sessionKey}`);
    return raw ? (JSON.parse(raw) as TodoItem[]) : [];
  }

  /** Replaces the session's items; an empty list forgets them. */
  set(sessionKey: string, items: TodoItem[]): void {
    if (items.length === 0) this.kv.delete(`s:${sessionKey}`);
    else this.kv.set(`s:${sessionKey}`, JSON.stringify(items.slice(0, MAX_TODO_ITEMS)));
  }

  /** Forgets a session's plan (the session ended). */
  forget(sessionKey: string): void {
    this.kv.delete(`s:${sessionKey}`);
  }
}

const MARK: Record<TodoItem["status"], string> = {
  pending: "[ ]",
  in_progress: "[~]",
  done: "[x]",
  cancelled: "[-]",
};

/** A plan as text: a count line, then one line per item (`3. [~] write the tests`). */
export function formatTodo(items: readonly TodoItem[]): string {
  if (items.length === 0) return "The plan is empty.";
  const done = items.filter((i) => i.status === "done").length;
  const open = items.filter((i) => i.status === "pending" || i.status === "in_progress").length;
  return [
    `Plan: ${done} done, ${open} open, ${items.length} in all`,
    ...items.map((i) => `${i.id}. ${MARK[i.status]} ${i.text}`),
  ].join("\n");
}
