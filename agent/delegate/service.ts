/**
 * The gateway's side of `delegate_task`: children are rows of `state.db` and jobs of the same
 * `JobQueue` as every turn (on Redis they spread over all workers). The service enqueues at most
 * `maxParallel` children of a call at once, records the first result of each (a job run again after its
 * worker died changes nothing), cancels children on /stop or when their time budget runs out, and wakes
 * the parent's waits. Children are keyed by the parent's turn and its tasks, so a parent run again after a
 * crash finds its children instead of starting new ones (see {@link groupIdOf}).
 */
import { createHash } from "node:crypto";
import type Database from "better-sqlite3";
import { describeError, HeraldError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { JobQueue, ModelUsage, QueueEvent, TurnJob } from "../../core/turn.js";
import type { ChatRef, OutboundButton } from "../../core/types.js";
import { type ChildRecord, isFinal, SqliteDelegations } from "./sqlite-delegations.js";
import type {
  DelegateChild,
  DelegateGroup,
  DelegateParent,
  DelegateStateApi,
  DelegateTask,
} from "./state.js";

/** Limits of delegation (`delegation:` in config.yaml). */
export interface DelegationSettings {
  /** Depth past which no child gets `delegate_task`. @defaultValue 2 */
  maxDepth: number;
  /** Children of one call running at once unless the call asks for fewer. @defaultValue 3 */
  maxParallel: number;
  /** Step cap of a child turn. @defaultValue 20 */
  maxIterations: number;
  /** Time budget of a child, from its start. @defaultValue 600000 */
  timeoutMs: number;
}

/** What the service works with. */
export interface DelegationOptions {
  db: Database.Database;
  queue: JobQueue;
  settings: DelegationSettings;
  logger: Logger;
  /** Runs writes in the gateway's transaction (group commit). @defaultValue runs `fn` */
  transaction?: <T>(fn: () => T) => T;
  now?: () => number;
  /**
   * Shows the chat a child's question with its buttons (an approval request of a dangerous command):
   * the child's reply goes to its parent, not to the chat, so the buttons would be lost otherwise.
   */
  notify?: ((chat: ChatRef, text: string, buttons: OutboundButton[][]) => void) | undefined;
  /**
   * Whether a journal turn is still open (pending or running); undefined for an id the journal lacks.
   * A parent aborted by a shutdown is still open (it runs again) and keeps its children.
   */
  isTurnOpen?: ((turnId: string) => boolean | undefined) | undefined;
  /** Records a child's tokens (once, with its first result) in the session's usage. */
  recordUsage?: ((job: TurnJob, lines: ModelUsage[]) => void) | undefined;
}

/** The toolset of `delegate_task`. */
export const DELEGATE_TOOLSET = "delegate";

const CHILD_PROMPT = [
  "You are a sub-agent of Herald working on one task for a parent agent.",
  "You see only the task and the context the parent passed, not the conversation.",
  "Use your tools as the task needs, then answer with a concise summary of what you found or did;",
  "name any files you wrote by their paths. Your answer goes to the parent agent, not to a person.",
].join(" ");

const rank = (state: DelegateChild["state"]) => (state === "waiting" ? 0 : state === "running" ? 1 : 2);

/** See the file comment. Implements the `delegate` member of the gateway's `StateClient`. */
export class DelegationService implements DelegateStateApi {
  readonly #store: SqliteDelegations;
  readonly #o: DelegationOptions;
  readonly #now: () => number;
  readonly #tx: <T>(fn: () => T) => T;
  readonly #waiters = new Map<string, Set<() => void>>();
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #log: Logger;

  constructor(options: DelegationOptions) {
    this.#o = options;
    this.#store = new SqliteDelegations(options.db);
    this.#now = options.now ?? Date.now;
    this.#tx = options.transaction ?? ((fn) => fn());
    this.#log = options.logger.child({ component: "delegation" });
  }

  async start(parent: DelegateParent, tasks: DelegateTask[], maxParallel?: number): Promise<DelegateGroup> {
    const { settings } = this.#o;
    const groupId = groupIdOf(parent.turnId, tasks);
    const existing = this.#store.group(groupId);
    if (existing.length) return view(groupId, existing);
    if (parent.depth >= settings.maxDepth)
      throw new HeraldError(
        `delegate_task is refused at depth ${parent.depth}: delegation goes at most ${settings.maxDepth} levels deep (delegation.max_depth). Do the task yourself.`,
        { code: "invalid_input" },
      );
    const depth = parent.depth + 1;
    const now = this.#now();
    const parallel = Math.max(1, Math.min(maxParallel ?? settings.maxParallel, settings.maxParallel));
    const children = tasks.map((task, index) => {
      const id = `${groupId}-${index + 1}`;
      const wanted = task.toolsets?.length ? task.toolsets : parent.toolsets;
      // Only what the parent has; delegate_task itself only above the depth limit.
      const toolsets = wanted.filter(
        (t) => parent.toolsets.includes(t) && (t !== DELEGATE_TOOLSET || depth < settings.maxDepth),
      );
      const job: TurnJob = {
        kind: "turn",
        turnId: id,
        origin: parent.origin,
        history: [],
        input: {
          text: task.context ? `${task.goal}\n\nContext from the parent:\n${task.context}` : task.goal,
        },
        systemPrompt: CHILD_PROMPT,
        toolsets: [...new Set(toolsets)],
        ...(parent.model ? { model: parent.model } : {}),
        maxIterations: settings.maxIterations,
        // The plan and the questions are the chat's: a child reports back to its parent instead.
        excludedTools: ["todo", "clarify"],
        delegation: { parentTurnId: parent.turnId, depth },
        createdAt: now,
      };
      return {
        id,
        groupId,
        index: index + 1,
        goal: task.goal,
        sessionKey: parent.origin.sessionKey,
        parentTurnId: parent.turnId,
        job,
        maxParallel: parallel,
        timeoutMs: settings.timeoutMs,
        createdAt: now,
      };
    });
    this.#tx(() => this.#store.insert(children));
    this.#log.info(
      { groupId, parent: parent.turnId, callId: parent.callId, tasks: tasks.length, depth },
      "children created",
    );
    this.#pump(groupId);
    return view(groupId, this.#store.group(groupId));
  }

  async wait(groupId: string, seenVersion: number, waitMs: number): Promise<DelegateGroup> {
    const current = () => view(groupId, this.#store.group(groupId));
    const now = current();
    if (now.version !== seenVersion || now.children.every((c) => isFinal(c.state))) return now;
    await new Promise<void>((resolve) => {
      const waiters = this.#waiters.get(groupId) ?? new Set();
      this.#waiters.set(groupId, waiters);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        if (waiters.size === 0) this.#waiters.delete(groupId);
        resolve();
      };
      const timer = setTimeout(done, waitMs);
      waiters.add(done);
    });
    return current();
  }

  /**
   * Cancels the group's open children once their parent is over: a parent aborted because its process
   * stops (it stays open in the journal, or as a running child) runs again and finds them.
   */
  async cancel(groupId: string): Promise<void> {
    const children = this.#store.group(groupId);
    const parentId = children[0]?.parentTurnId;
    if (!parentId) return;
    const asChild = this.#store.get(parentId);
    const parentOpen = asChild ? !isFinal(asChild.state) : this.#o.isTurnOpen?.(parentId);
    if (parentOpen) {
      this.#log.info({ groupId }, "parent aborted but still open (a restart): children kept");
      return;
    }
    this.#cancelChildren(
      children.filter((c) => !isFinal(c.state)),
      "cancelled with its parent",
    );
  }

  /** Cancels the open children of a session's turns (/stop); returns how many. */
  cancelSession(sessionKey: string): number {
    return this.#cancelChildren(this.#store.open(sessionKey), "stopped by the user");
  }

  /** Cancels the open children of a parent turn that ended. */
  cancelParent(parentTurnId: string): number {
    return this.#cancelChildren(this.#store.openOf(parentTurnId), "its parent turn ended");
  }

  /** Follows the queue: a child's result is recorded once, then its group moves on. */
  readonly onQueueEvent = (event: QueueEvent): void => {
    // Every turn's end passes here: only a child's id (`groupIdOf`-`index`) is looked up.
    if (event.type === "progress" || !CHILD_ID.test(event.jobId)) return;
    const child = this.#store.get(event.jobId);
    if (!child || isFinal(child.state)) return;
    if (event.type === "completed") {
      const r = event.result;
      const ok = r.kind === "ok";
      if (r.kind === "ok" && r.reply.buttons?.length && this.#o.notify) {
        // A child stopped to ask the user (an approval): the question reaches the chat with its buttons.
        this.#o.notify(child.job.origin.chat, `🧩 A subtask asks:\n${r.reply.text}`, r.reply.buttons);
      }
      const summary = r.kind === "ok" ? r.reply.text : r.userMessage;
      const files =
        r.kind === "ok" ? r.reply.files?.map((f) => ({ path: f.path, fileName: f.fileName })) : undefined;
      const first = this.#finish(child, ok ? "done" : "failed", {
        summary,
        files,
        model: r.kind === "ok" ? r.model : undefined,
      });
      const lines = r.usage?.byModel;
      if (first && lines?.length) this.#tx(() => this.#o.recordUsage?.(child.job, lines));
    } else this.#finish(child, "failed", { summary: `The child failed: ${event.error}` });
  };

  /**
   * After a restart: enqueues the running children again (idempotent by id: a finished job answers
   * again) and the waiting ones as slots free, and arms their time budgets.
   */
  recover(): void {
    const open = this.#store.open();
    for (const child of open.filter((c) => c.state === "running")) this.#enqueue(child);
    for (const groupId of new Set(open.map((c) => c.groupId))) this.#pump(groupId);
    if (open.length) this.#log.info({ children: open.length }, "open children resumed");
  }

  /** Clears the time budgets' timers and wakes every wait. */
  close(): void {
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    for (const waiters of this.#waiters.values()) for (const wake of [...waiters]) wake();
  }

  #cancelChildren(children: ChildRecord[], reason: string): number {
    let count = 0;
    for (const child of children) {
      if (!this.#tx(() => this.#store.finish(child.id, "cancelled", { summary: reason }, this.#now())))
        continue;
      count++;
      this.#clearTimer(child.id);
      if (child.state === "running")
        void this.#o.queue.cancel(child.id).catch((err: unknown) => this.#warn("cancel failed", err));
      this.#wake(child.groupId);
    }
    if (count) this.#log.info({ count, reason }, "children cancelled");
    return count;
  }

  #finish(
    child: ChildRecord,
    state: "done" | "failed",
    result: { summary: string; files?: DelegateChild["files"]; model?: string | undefined },
  ): boolean {
    if (!this.#tx(() => this.#store.finish(child.id, state, result, this.#now()))) return false;
    this.#clearTimer(child.id);
    this.#pump(child.groupId);
    this.#wake(child.groupId);
    return true;
  }

  /** Starts waiting children while fewer than the group's `maxParallel` run. */
  #pump(groupId: string): void {
    const children = this.#store.group(groupId);
    let running = children.filter((c) => c.state === "running").length;
    for (const child of children) {
      if (running >= child.maxParallel) break;
      if (child.state !== "waiting") continue;
      if (!this.#tx(() => this.#store.markRunning(child.id, this.#now()))) continue;
      running++;
      this.#enqueue({ ...child, state: "running", startedAt: this.#now() });
      this.#wake(groupId);
    }
  }

  #enqueue(child: ChildRecord): void {
    const deadline = (child.startedAt ?? this.#now()) + child.timeoutMs;
    const timer = setTimeout(() => this.#expire(child), Math.max(0, deadline - this.#now()));
    timer.unref();
    this.#timers.set(child.id, timer);
    this.#o.queue.enqueue(child.job, { id: child.id, orderingKey: child.id }).catch((err: unknown) => {
      this.#warn("enqueue failed", err);
      this.#finish(child, "failed", { summary: `The child could not be queued: ${describeError(err)}` });
    });
  }

  #expire(child: ChildRecord): void {
    this.#timers.delete(child.id);
    const s = Math.round(child.timeoutMs / 1000);
    if (
      !this.#tx(() =>
        this.#store.finish(
          child.id,
          "failed",
          { summary: `ran out of its time budget (${s} s)` },
          this.#now(),
        ),
      )
    )
      return;
    void this.#o.queue.cancel(child.id).catch((err: unknown) => this.#warn("cancel failed", err));
    this.#pump(child.groupId);
    this.#wake(child.groupId);
  }

  #clearTimer(id: string): void {
    const timer = this.#timers.get(id);
    if (timer) clearTimeout(timer);
    this.#timers.delete(id);
  }

  #wake(groupId: string): void {
    for (const wake of [...(this.#waiters.get(groupId) ?? [])]) wake();
  }

  #warn(msg: string, err: unknown): void {
    this.#log.warn({ error: describeError(err) }, msg);
  }
}

/**
 * The group id of a call: colon-free (a job id), the same whenever the parent turn asks for the same
 * tasks. Not the call id: a parent run again after its worker died asks the model again, which names
 * its calls anew but asks for the same work; it then finds the children instead of doubling them.
 */
/** The shape of a child's job id: its group's id (`groupIdOf`), a dash, its index. */
const CHILD_ID = /^d[0-9a-f]{16}-\d+$/;

export function groupIdOf(parentTurnId: string, tasks: readonly DelegateTask[]): string {
  const canonical = JSON.stringify(
    tasks.map((t) => [t.goal, t.context ?? "", [...(t.toolsets ?? [])].sort()]),
  );
  return `d${createHash("sha256").update(`${parentTurnId}\n${canonical}`).digest("hex").slice(0, 16)}`;
}

function view(groupId: string, children: ChildRecord[]): DelegateGroup {
  return {
    id: groupId,
    version: children.reduce((n, c) => n + rank(c.state), 0),
    children: children.map((c) => ({
      index: c.index,
      id: c.id,
      goal: c.goal,
      state: c.state,
      ...(c.summary !== undefined ? { summary: c.summary } : {}),
      ...(c.files ? { files: c.files } : {}),
      ...(c.model ? { model: c.model } : {}),
    })),
  };
}
