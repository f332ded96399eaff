/**
 * One platform's end-to-end tests through the whole gateway: its fake platform server started per test
 * (and kept when a test starts the gateway again), the gateway configured by env as an operator would,
 * and what those tests read back: replies awaited on the fake, the user texts the model saw, the
 * adapters' states in `/health`. The fake and the gateway are torn down after each test (per-test.ts).
 */
import { expect, vi } from "vitest";
import { createLogger, type Logger } from "../../core/logger.js";
import type { Harness } from "./gateway-harness.js";
import { type ClosableFake, type PlatformPerTest, platformPerTest } from "./per-test.js";

/** How a test file's platform is started. */
export interface GatewayPlatformSpec<F extends ClosableFake> {
  startFake(): Promise<F>;
  /** The chats and users the fake knows; run on every start (it may run twice on one fake). */
  prepare?(fake: F): void;
  /** The env an operator sets for the platform (its allowlist included). */
  env(fake: F): Record<string, string>;
  /** Once the gateway runs: points the fake's webhook at it, or waits until the adapter connected. */
  connect?(fake: F, h: Harness): void | Promise<void>;
}

/** What a test file's tests start the platform with. */
export interface GatewayPlatform<F extends ClosableFake> {
  /** The tracked fake and harness, for tests that start them their own way. */
  readonly running: PlatformPerTest<F>;
  /**
   * Starts the gateway with the platform's env and `env` over it (the fake too, unless this test
   * started it already); with `logLines`, the gateway logs at debug level into it.
   */
  start(env?: Record<string, string>, logLines?: string[]): Promise<{ fake: F; h: Harness }>;
}

/** Registers the per-test teardown in the calling test file; call once at its top level. */
export function gatewayPlatform<F extends ClosableFake>(spec: GatewayPlatformSpec<F>): GatewayPlatform<F> {
  const running = platformPerTest<F>();
  return {
    running,
    async start(env = {}, logLines) {
      const fake = running.fake ?? running.trackFake(await spec.startFake());
      spec.prepare?.(fake);
      const h = await running.startHarness({
        env: { ...spec.env(fake), ...env },
        ...(logLines ? { logger: linesLogger(logLines) } : {}),
      });
      await spec.connect?.(fake, h);
      return { fake, h };
    },
  };
}

/** A debug-level logger whose lines (JSON) are pushed to `lines`. */
export function linesLogger(lines: string[]): Logger {
  return createLogger({ level: "debug", destination: { write: (s: string) => void lines.push(s) } });
}

/**
 * Waits until `read()` has at least `count` items, then returns them.
 * @throws the last failed expectation after `timeoutMs`
 */
export async function atLeast<T>(read: () => T[], count: number, timeoutMs = 15_000): Promise<T[]> {
  await vi.waitFor(() => expect(read().length).toBeGreaterThanOrEqual(count), { timeout: timeoutMs });
  return read();
}

/** The text of the last user message of each model request, in order. */
export const userTexts = (h: Harness) =>
  h.llm.requests.map((r) => String(r.messages.filter((m) => m.role === "user").at(-1)?.content ?? ""));

/** The gateway's `/health` answer: each adapter's state and detail. */
export async function gatewayHealth(
  h: Harness,
): Promise<{ adapters: Record<string, { state: string; detail?: string }> }> {
  return (await (await fetch(`${h.apiUrl}/health`)).json()) as {
    adapters: Record<string, { state: string; detail?: string }>;
  };
}
