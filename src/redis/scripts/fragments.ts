import { SENT_FIELD } from "../keys.js";

/**
 * Pieces of Lua shared by several scripts, written once. Each builds Lua text from the Lua
 * expressions it is given (a key such as `KEYS[2]`, a value such as `ARGV[1]`).
 */

/** True while `token` holds the lock or lease `key` (a lapsed one, or another's, is not held). */
export const lockHeld = (key: string, token: string): string =>
  `(redis.call('GET', ${key}) == ${token})`;

/** True when the job's hash `jobKey` records its request as sent. */
export const sentRecorded = (jobKey: string): string =>
  `(redis.call('HEXISTS', ${jobKey}, '${SENT_FIELD}') == 1)`;

/** Records in the job's hash `jobKey` that its request was sent, at `at`. */
export const recordSent = (jobKey: string, at: string): string =>
  `redis.call('HSET', ${jobKey}, '${SENT_FIELD}', ${at})`;

/** Drops the job's "sent" record (a request proved never sent). */
export const dropSent = (jobKey: string): string =>
  `redis.call('HDEL', ${jobKey}, '${SENT_FIELD}')`;

/** The states in which a batch can still be cancelled: its jobs may not all have been sent. */
export const CANCELLABLE_BATCH_STATES = ["validating", "queued", "running"] as const;

/** True when the batch whose meta is `metaKey` was cancelled: none of its jobs may leave after. */
export const batchCancelled = (metaKey: string): string =>
  `(redis.call('HGET', ${metaKey}, 'state') == 'cancelled')`;

/** Lua function `cancellable(state)`: whether a batch in `state` can be cancelled. */
export const CANCELLABLE = `
local function cancellable(state)
  return ${CANCELLABLE_BATCH_STATES.map((s) => `state == '${s}'`).join(" or ")}
end`;

/**
 * The batch completion rule, as Lua functions. `batchProgress(meta)` reads the meta's state and
 * counters; `allFinished(m)`: every accepted row has its result; `finishedState(m)`: the state
 * it then ends in, `completed` when every accepted row succeeded and no row was skipped, else
 * `completed_with_failures`.
 */
export const BATCH_COMPLETION = `
local function batchProgress(meta)
  return redis.call('HMGET', meta, 'state', 'accepted', 'done', 'n:succeeded', 'skipped')
end
local function allFinished(m)
  return tonumber(m[3]) >= tonumber(m[2])
end
local function finishedState(m)
  local ok = tonumber(m[4]) == tonumber(m[2]) and tonumber(m[5]) == 0
  return ok and 'completed' or 'completed_with_failures'
end`;
