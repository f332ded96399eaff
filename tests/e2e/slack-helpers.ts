/**
 * Shared pieces of the Slack adapter's end-to-end tests: a recording stand-in for the gateway's inbound
 * side (it keeps a ledger by `messageId` like the real one, so a duplicate is reported as such), and a
 * way to start the real adapter against the fake Slack.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createSlackAdapter,
  type SlackAdapter,
  type SlackAdapterConfig,
} from "../../adapters/slack/index.js";
import { createLogger, type Logger } from "../../core/logger.js";
import type { InboundHandler, InboundMessage, InboundOutcome, KeyValueStore } from "../../core/types.js";
import type { FakeSlack } from "../fakes/slack/index.js";

export const SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";

/** What the adapter handed to the gateway, and control over how "recording" goes. */
export interface RecordingGateway {
  handler: InboundHandler;
  /** Every call, duplicates included. */
  calls: InboundMessage[];
  outcomes: InboundOutcome[];
  /** First delivery of each messageId. */
  accepted(): InboundMessage[];
  waitForCalls(count: number, timeoutMs?: number): Promise<void>;
  /** The next call throws (the ledger could not record it). */
  failNext(): void;
  /** Calls wait until `release()`; resolves once one is waiting. */
  hold(): { entered: Promise<void>; release: () => void };
  /** Lets held calls go (a failed test must not leave the adapter's stop waiting). */
  releaseAll(): void;
}

export function recordingGateway(): RecordingGateway {
  const calls: InboundMessage[] = [];
  const outcomes: InboundOutcome[] = [];
  const seen = new Set<string>();
  const waiters = new Set<() => void>();
  let failures = 0;
  let gate: { promise: Promise<void>; entered: () => void; release: () => void } | undefined;

  const handler: InboundHandler = async (message) => {
    calls.push(structuredClone(message));
    for (const w of [...waiters]) w();
    if (gate) {
      const g = gate;
      g.entered();
      await g.promise;
    }
    if (failures > 0) {
      failures -= 1;
      throw new Error("ledger unavailable");
    }
    const outcome: InboundOutcome = seen.has(message.messageId) ? "duplicate" : "accepted";
    seen.add(message.messageId);
    outcomes.push(outcome);
    return outcome;
  };

  return {
    handler,
    calls,
    outcomes,
    accepted: () => calls.filter((m, i) => calls.findIndex((o) => o.messageId === m.messageId) === i),
    waitForCalls(count, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (calls.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`gateway got ${calls.length} message(s), expected ${count}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    failNext() {
      failures += 1;
    },
    releaseAll() {
      const g = gate;
      gate = undefined;
      g?.release();
    },
    hold() {
      let release!: () => void;
      let entered!: () => void;
      const promise = new Promise<void>((r) => {
        release = r;
      });
      const enteredPromise = new Promise<void>((r) => {
        entered = r;
      });
      gate = { promise, entered, release };
      return {
        entered: enteredPromise,
        release: () => {
          gate = undefined;
          release();
        },
      };
    },
  };
}

function memoryKv(): KeyValueStore {
  const map = new Map<string, string>();
  return { get: (k) => map.get(k), set: (k, v) => void map.set(k, v), delete: (k) => void map.delete(k) };
}

/** A logger whose output the test can read (to check that no secret reaches it). */
export function captureLogger(): { logger: Logger; text: () => string } {
  const lines: string[] = [];
  const logger = createLogger({ level: "trace", destination: { write: (s: string) => void lines.push(s) } });
  return { logger, text: () => lines.join("") };
}

export interface RunningAdapter {
  adapter: SlackAdapter;
  gateway: RecordingGateway;
  cacheDir: string;
  stop(): Promise<void>;
}

/** Creates the real adapter against `fake` (HTTP events unless `appToken` is given) and starts it. */
export async function startSlackAdapter(
  fake: FakeSlack,
  overrides: Partial<SlackAdapterConfig> = {},
  logger: Logger = createLogger({ level: "silent" }),
): Promise<RunningAdapter> {
  const homeDir = await mkdtemp(join(tmpdir(), "herald-slack-"));
  const cacheDir = join(homeDir, "cache");
  const adapter = createSlackAdapter(
    {
      botToken: fake.botToken,
      ...(overrides.appToken ? {} : { signingSecret: SIGNING_SECRET }),
      apiUrl: fake.apiUrl,
      reconnectBaseMs: 50,
      ...overrides,
    },
    { logger, homeDir, cacheDir, kv: memoryKv() },
  );
  const gateway = recordingGateway();
  try {
    await adapter.start(gateway.handler);
  } catch (err) {
    await rm(homeDir, { recursive: true, force: true });
    throw err;
  }
  return {
    adapter,
    gateway,
    cacheDir,
    async stop() {
      gateway.releaseAll();
      await adapter.stop();
      await rm(homeDir, { recursive: true, force: true });
    },
  };
}
