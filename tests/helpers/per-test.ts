/**
 * One test's fake platform server and the gateway harness in front of it, torn down after the test:
 * the harness stops first (the adapter shuts down while its platform still answers), then the fake
 * closes.
 */
import { afterEach } from "vitest";
import { type Harness, type HarnessOptions, startHarness } from "./gateway-harness.js";

/** A fake platform server, as the fakes in `tests/fakes/` start them. */
export interface ClosableFake {
  close(): Promise<void>;
}

/** What a test file's `start()` hands its fake and harness to. */
export interface PlatformPerTest<F extends ClosableFake> {
  /** The fake the running test started, if any. */
  readonly fake: F | undefined;
  /** Records `fake` to be closed after the test; returns it. */
  trackFake<T extends F>(fake: T): T;
  /** Starts a harness (`startHarness(options)`) to be stopped after the test, before the fake closes. */
  startHarness(options?: HarnessOptions): Promise<Harness>;
}

/**
 * Registers an `afterEach` in the calling test file that stops the tracked harness, then closes the
 * tracked fake, and forgets both. Call once at the top level of the file.
 */
export function platformPerTest<F extends ClosableFake>(): PlatformPerTest<F> {
  let fake: F | undefined;
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.stop();
    await fake?.close();
    harness = undefined;
    fake = undefined;
  });
  return {
    get fake() {
      return fake;
    },
    trackFake(started) {
      fake = started;
      return started;
    },
    async startHarness(options) {
      harness = await startHarness(options);
      return harness;
    },
  };
}
