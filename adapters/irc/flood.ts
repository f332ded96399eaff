/**
 * Flood control: a token bucket of lines. Servers disconnect clients that send too fast ("Excess
 * Flood"); Herald sends `burst` lines at once, then `perSecond`. A send that would wait longer than
 * `maxWaitMs` is refused with the wait, so the outbox retries later instead of holding the connection.
 */
import { sleep } from "../../core/sleep.js";

export class SendBudget {
  private tokens: number;
  private last: number;
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly burst: number,
    private readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.last = now();
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.perSecond);
    this.last = now;
  }

  /** How long `lines` more lines would wait now (ms). */
  waitFor(lines: number): number {
    this.refill();
    const missing = lines - this.tokens;
    return missing <= 0 ? 0 : Math.ceil((missing / this.perSecond) * 1000);
  }

  /** Waits for one line's token (in call order) and takes it. */
  take(signal?: AbortSignal): Promise<void> {
    const turn = this.tail.then(async () => {
      const wait = this.waitFor(1);
      if (wait > 0) await sleep(wait, signal);
      this.refill();
      this.tokens -= 1;
    });
    this.tail = turn.catch(() => undefined);
    return turn;
  }
}
