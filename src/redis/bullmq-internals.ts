import type { Worker } from "bullmq";
import type { RedisConnection } from "./connection.js";

/**
 * What moneyq relies on of BullMQ beyond its public API, in one place. BullMQ is pinned to an
 * exact version (package.json) because none of this is promised across its releases;
 * test/redis/bullmq-internals.test.ts runs BullMQ's own operations and checks each assumption
 * below by name, so an upgrade that breaks one fails there first.
 *
 * The assumptions, and who depends on each:
 *
 * - Key names (`bullKeys`): a queue's keys are `<prefix>:<queue>:<suffix>`, a job's hash is
 *   `<queueKey>:<jobId>` and its lock `<queueKey>:<jobId>:lock`. moneyq's Lua scripts read and
 *   write these keys atomically with its own (the rate gate, locked job writes, producers'
 *   replays and withdrawals, sweeps, metrics).
 * - The lock (`lockKeyOf`): while a worker processes a job, the lock key's value is the job's
 *   token (the `token` a processor receives); the key is gone once the job leaves `active`.
 *   A write that checks the lock against the token is therefore a write by the holder only.
 * - Job hash fields (`JOB_FIELDS`): `data` (JSON), `priority`, `timestamp` (enqueue, ms),
 *   `atm` (attempts made) and `stc` (times found stalled).
 * - The prioritized set (`priorityScore`): a job with priority p > 0 waits in
 *   `<queueKey>:prioritized` with score `p * 2^32 + counter`, the counter rising by one per
 *   job added, so one priority's jobs sit in one score range in enqueue order. The lanes are
 *   BullMQ priorities, and the rate gate reorders a lane by rewriting these scores.
 * - The wait list: a job without priority waits in `<queueKey>:wait`, also while the queue is
 *   paused (the queue's meta hash then has a `paused` field). BullMQ 5 kept a paused queue's
 *   jobs in a `<queueKey>:paused` list instead; `bullKeys.legacyPaused` names it so that jobs
 *   left there by an older release can be moved back (queues/unlaned-jobs.ts).
 * - The meta hash `<queueKey>:meta` exists once a Queue or Worker has opened the queue.
 * - `job.moveToDelayed(at, token)` moves an active job to `<queueKey>:delayed`, releasing its
 *   lock, and a worker then fetches it once `at` has passed.
 * - Stalled checks: a job found in `active` without its lock is moved to the end of the wait
 *   list (whatever its priority) with `stc` increased; moneyq reads `stc` and `atm` to know
 *   that an earlier run may have sent its request.
 * - Markers (`markedAt`): while a queue that is not paused has jobs waiting, its
 *   `<queueKey>:marker` sorted set holds member "0" at score 0; while it has delayed jobs, member
 *   "1" at the next one's due time (ms). A worker's blocking wait takes them; with no worker
 *   running they stay, so one read tells whether an account has work, and when.
 * - The delayed set's score (`workDueAt`): a delayed job's due time (ms) times 4096, plus a
 *   counter below 4096.
 * - Reconnection (`onReconnected`): a Worker emits `ready` once, when it first connects; its
 *   backend emits `ready` each time one of its connections is ready again after an outage.
 */

/** BullMQ's keys, as BullMQ names them: `queueKey` is a queue's qualified name (`<prefix>:<queue>`). */
export const bullKeys = {
  queue: (prefix: string, queueName: string): string => `${prefix}:${queueName}`,
  /** A job's hash. */
  job: (queueKey: string, jobId: string): string => `${queueKey}:${jobId}`,
  /** A job's lock, held by the worker processing it. */
  lock: (queueKey: string, jobId: string): string => `${queueKey}:${jobId}:lock`,
  /** The queue's prioritized jobs (zset), where the lanes are. */
  prioritized: (queueKey: string): string => `${queueKey}:prioritized`,
  /** The queue's active jobs (list). */
  active: (queueKey: string): string => `${queueKey}:active`,
  /** Jobs without priority, waiting (list), also while the queue is paused. */
  wait: (queueKey: string): string => `${queueKey}:wait`,
  /** Jobs waiting for a time (zset). */
  delayed: (queueKey: string): string => `${queueKey}:delayed`,
  /** Tells workers that jobs wait (score 0) or when the next delayed one is due (zset). */
  marker: (queueKey: string): string => `${queueKey}:marker`,
  /** The queue's settings; exists once the queue has been opened. */
  meta: (queueKey: string): string => `${queueKey}:meta`,
  /** BullMQ 5's list of a paused queue's jobs; BullMQ 6 keeps them in the wait list. */
  legacyPaused: (queueKey: string): string => `${queueKey}:paused`,
};

/** The fields of a job's hash that moneyq reads or writes beside BullMQ. */
export const JOB_FIELDS = Object.freeze({
  data: "data",
  priority: "priority",
  timestamp: "timestamp",
  attemptsMade: "atm",
  stalledCounter: "stc",
});

/** One priority's width in the prioritized set's scores: 2^32. */
export const PRIORITY_SCORE_STEP = 4_294_967_296;

/** The score BullMQ gives the `counter`th job added with `priority`. */
export function priorityScore(priority: number, counter: number): number {
  return priority * PRIORITY_SCORE_STEP + (counter % PRIORITY_SCORE_STEP);
}

/** The scores of one priority's jobs in the prioritized set, both ends included. */
export function priorityScoreRange(priority: number): readonly [number, number] {
  return [priority * PRIORITY_SCORE_STEP, (priority + 1) * PRIORITY_SCORE_STEP - 1];
}

/** What names a job's keys: BullMQ's Job has both. */
interface JobAddress {
  readonly queueQualifiedName: string;
  readonly id?: string | undefined;
}

/** The Redis key of a job's lock, as BullMQ names it. */
export const lockKeyOf = (job: JobAddress): string =>
  bullKeys.lock(job.queueQualifiedName, String(job.id));

/** The Redis key of a job's hash. */
export const jobKeyOf = (job: JobAddress): string =>
  bullKeys.job(job.queueQualifiedName, String(job.id));

/**
 * Calls `listener` each time one of the worker's connections is ready again (after an outage),
 * through the worker's backend: the Worker's own `ready` comes only once.
 */
export function onReconnected(worker: Worker, listener: () => void): void {
  worker.getBackend().on("ready", listener);
}

/** A delayed job's due time (ms) from its score in the delayed set. */
const DELAYED_SCORE_STEP = 4096;

/**
 * When the queue's markers say it has work: `now` for jobs waiting, the next delayed job's due
 * time (ms), or undefined for none (or a paused queue's jobs only). Reads one key.
 */
export async function markedAt(
  redis: RedisConnection,
  queueKey: string,
  now: number,
): Promise<number | undefined> {
  const [, score] = await redis.zrange(bullKeys.marker(queueKey), "0", "0", "WITHSCORES");
  if (score === undefined) return undefined;
  return Math.max(now, Number(score));
}

/**
 * When the queue has work, read from its jobs rather than its markers (which a worker's wait
 * may just have taken): `now` when jobs wait in a queue not paused, or are active (a worker
 * runs them, or one that died left them there: only a running worker's stalled checks hand
 * those back), else the next delayed job's due time (ms), else undefined.
 */
export async function workDueAt(
  redis: RedisConnection,
  queueKey: string,
  now: number,
): Promise<number | undefined> {
  const answers = await redis
    .pipeline()
    .llen(bullKeys.wait(queueKey))
    .zcard(bullKeys.prioritized(queueKey))
    .hexists(bullKeys.meta(queueKey), "paused")
    .zrange(bullKeys.delayed(queueKey), "0", "0", "WITHSCORES")
    .llen(bullKeys.active(queueKey))
    .exec();
  const [waiting, prioritized, paused, delayed, active] = (answers ?? []).map(([error, value]) => {
    if (error) throw error;
    return value;
  });
  if (Number(active) > 0) return now;
  if (!paused && (Number(waiting) > 0 || Number(prioritized) > 0)) return now;
  const score = (delayed as string[] | undefined)?.[1];
  if (score === undefined) return undefined;
  return Math.max(now, Math.floor(Number(score) / DELAYED_SCORE_STEP));
}
