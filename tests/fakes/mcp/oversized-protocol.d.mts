/** Types of oversized-protocol.mjs. */

/** What to send for one request: a small JSON answer, or `dump`'s huge one. */
export type Answer = { small: unknown } | { huge: number; id: unknown };

export function answer(message: { id?: unknown; method?: string; params?: unknown }): Answer | undefined;

export function writeHuge(
  id: unknown,
  megabytes: number,
  write: (chunk: string) => Promise<boolean>,
): Promise<void>;
