/**
 * The Lua scripts behind BullJobQueue's per-orderingKey exclusivity. Each orderingKey has a list of
 * BullMQ job ids in arrival order (only its head may run) and a lock (SET NX PX) held while the head
 * runs. Each script runs atomically in Redis; they only read BullMQ's completed and failed sets.
 */
import type { Redis } from "ioredis";

/** Drops heads whose job already finished (their release was lost with a crashed worker). */
const DROP_FINISHED_HEADS = `
local head = redis.call('LINDEX', KEYS[1], 0)
while head and head ~= ARGV[1]
  and (redis.call('ZSCORE', KEYS[3], head) or redis.call('ZSCORE', KEYS[4], head)) do
  redis.call('LPOP', KEYS[1])
  head = redis.call('LINDEX', KEYS[1], 0)
end
`;

const scripts = {
  /**
   * Enqueue, before BullMQ's add. KEYS: job hash, order list, cancel marker, completed, failed.
   * ARGV: job id. Returns 1 when the caller must add the job (it is now in the order list), 0 when the
   * job is known and pending, 2 when it completed, 3 when it failed.
   */
  heraldReserve: {
    numberOfKeys: 5,
    lua: `
if redis.call('EXISTS', KEYS[1]) == 1 then
  if redis.call('ZSCORE', KEYS[4], ARGV[1]) then return 2 end
  if redis.call('ZSCORE', KEYS[5], ARGV[1]) then return 3 end
  return 0
end
redis.call('DEL', KEYS[3])
if not redis.call('LPOS', KEYS[2], ARGV[1]) then redis.call('RPUSH', KEYS[2], ARGV[1]) end
return 1`,
  },
  /**
   * A worker's try to run a job. KEYS: order list, key lock, completed, failed, cancel marker.
   * ARGV: job id, lock token, lock ttl ms. Returns 1 (locked, run it), 0 (its turn, but the key lock is
   * held: the same job still runs elsewhere), -1 (another job of the key goes first), -2 (cancelled).
   */
  heraldAcquire: {
    numberOfKeys: 5,
    lua: `
if redis.call('EXISTS', KEYS[5]) == 1 then return -2 end
${DROP_FINISHED_HEADS}
if not head then
  -- The list lost this job (a Redis that restarted empty): it joins at the back.
  redis.call('RPUSH', KEYS[1], ARGV[1])
elseif head ~= ARGV[1] then
  if not redis.call('LPOS', KEYS[1], ARGV[1]) then redis.call('RPUSH', KEYS[1], ARGV[1]) end
  return -1
end
if redis.call('SET', KEYS[2], ARGV[2], 'NX', 'PX', ARGV[3]) then return 1 end
if redis.call('GET', KEYS[2]) == ARGV[2] then
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  return 1
end
return 0`,
  },
  /**
   * Whether a job that just stepped aside may run now. KEYS: order list, key lock, completed, failed.
   * ARGV: job id. Returns 1 when it is the head and the key is free.
   */
  heraldMayRun: {
    numberOfKeys: 4,
    lua: `
${DROP_FINISHED_HEADS}
if head == ARGV[1] and redis.call('EXISTS', KEYS[2]) == 0 then return 1 end
return 0`,
  },
  /**
   * Keeps a running job's key lock. KEYS: key lock, cancel marker. ARGV: token, ttl ms. Returns 1 while
   * held, 0 when lost, -1 when the job was cancelled (a cancel message this worker missed).
   */
  heraldRenew: {
    numberOfKeys: 2,
    lua: `
if redis.call('EXISTS', KEYS[2]) == 1 then return -1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`,
  },
  /**
   * Lets go of a job. KEYS: order list, key lock, completed, failed. ARGV: job id, lock token ('' for
   * none), list mode: 'keep', 'remove', or 'if-finished' (remove only once BullMQ finished the job).
   * Returns the order list's head afterwards (or false).
   */
  heraldRelease: {
    numberOfKeys: 4,
    lua: `
local mode = ARGV[3]
if mode == 'remove' or (mode == 'if-finished'
  and (redis.call('ZSCORE', KEYS[3], ARGV[1]) or redis.call('ZSCORE', KEYS[4], ARGV[1]))) then
  redis.call('LREM', KEYS[1], 1, ARGV[1])
end
if ARGV[2] ~= '' and redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('DEL', KEYS[2]) end
${DROP_FINISHED_HEADS.replace("head ~= ARGV[1] and", "")}
return head`,
  },
} as const;

type Key = string;

/** The scripts as typed calls on one connection. */
export interface OrderingScripts {
  reserve(keys: [Key, Key, Key, Key, Key], jobId: string): Promise<number>;
  acquire(keys: [Key, Key, Key, Key, Key], jobId: string, token: string, ttlMs: number): Promise<number>;
  mayRun(keys: [Key, Key, Key, Key], jobId: string): Promise<number>;
  renew(keys: [Key, Key], token: string, ttlMs: number): Promise<number>;
  release(
    keys: [Key, Key, Key, Key],
    jobId: string,
    token: string,
    mode: "keep" | "remove" | "if-finished",
  ): Promise<string | null>;
}

/** Registers the scripts on `redis` (EVALSHA with a fallback to EVAL) and returns typed callers. */
export function orderingScripts(redis: Redis): OrderingScripts {
  for (const [name, script] of Object.entries(scripts)) {
    redis.defineCommand(name, { numberOfKeys: script.numberOfKeys, lua: script.lua });
  }
  // defineCommand adds methods ioredis' types cannot know about.
  const call = (name: keyof typeof scripts, ...args: (string | number)[]): Promise<unknown> =>
    (redis as unknown as Record<string, (...a: (string | number)[]) => Promise<unknown>>)[name]!(...args);
  return {
    reserve: (keys, jobId) => call("heraldReserve", ...keys, jobId) as Promise<number>,
    acquire: (keys, jobId, token, ttlMs) =>
      call("heraldAcquire", ...keys, jobId, token, ttlMs) as Promise<number>,
    mayRun: (keys, jobId) => call("heraldMayRun", ...keys, jobId) as Promise<number>,
    renew: (keys, token, ttlMs) => call("heraldRenew", ...keys, token, ttlMs) as Promise<number>,
    release: async (keys, jobId, token, mode) =>
      ((await call("heraldRelease", ...keys, jobId, token, mode)) as string | null) ?? null,
  };
}
