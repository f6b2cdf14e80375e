/**
 * The wait before each retry: about three days in all, as receivers of Standard Webhooks
 * expect (a receiver down over a weekend still gets every event).
 */
export const WEBHOOK_RETRY_SCHEDULE_MS: readonly number[] = Object.freeze(
  [5, 300, 1_800, 7_200, 18_000, 36_000, 50_400, 72_000, 72_000].map((s) => s * 1000),
);
/** Each wait is this share longer or shorter at random, so retries of many events spread out. */
export const RETRY_JITTER = 0.1;
/** A receiver's Retry-After is honoured within these bounds. */
export const MIN_RETRY_AFTER_MS = 1_000;
export const MAX_RETRY_AFTER_MS = 86_400_000;

/**
 * The wait before the attempt after `attemptsMade`: the receiver's Retry-After when it gave one
 * (within bounds), else the schedule's wait for that attempt, jittered. A delivery queued with
 * more attempts than the schedule has (an earlier release queued 12) waits its last wait again.
 */
export function retryWait(
  attemptsMade: number,
  retryAfterMs: number | undefined,
  schedule: readonly number[],
  random: () => number,
): number {
  if (retryAfterMs !== undefined)
    return Math.min(MAX_RETRY_AFTER_MS, Math.max(MIN_RETRY_AFTER_MS, retryAfterMs));
  const wait = schedule[Math.min(attemptsMade, schedule.length) - 1] ?? 0;
  return Math.round(wait * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random()));
}
