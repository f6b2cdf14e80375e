import { setTimeout as sleepFor } from "node:timers/promises";
import { DelayedError, type Job, RateLimitError, WaitingError, type Worker } from "bullmq";
import type { PipelineMetrics } from "../metrics/pipeline-metrics.js";
import type { JobData, JobState } from "../queues/job-data.js";
import { LANE_PRIORITY } from "../queues/lanes.js";
import type { JobRun } from "./job-run.js";
import { type LockedWrites, LockLostError } from "./locked-writes.js";
import type { ProcessorDeps } from "./processor-deps.js";

/** Waits `ms`; a fired `signal` (this worker lost the job) stops the job instead. */
export async function sleep(ms: number, job: Job, signal: AbortSignal | undefined): Promise<void> {
  try {
    await sleepFor(ms, undefined, signal ? { signal } : undefined);
  } catch (error) {
    if (signal?.aborted) throw new LockLostError(job.id);
    throw error;
  }
}

export function stopIfAborted(job: Job, signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new LockLostError(job.id);
}

/** Records the job's state (checking the lock) and delays it, in the lookup lane. */
export async function moveLater(
  writes: LockedWrites,
  job: Job<JobData>,
  token: string | undefined,
  state: JobState,
  delayMs: number,
): Promise<never> {
  await writes.write(job, token, { ...job.data, state }, { priority: LANE_PRIORITY.lookup });
  await job.moveToDelayed(Date.now() + delayMs, token);
  throw new DelayedError();
}

/**
 * Hands the job back to the head of its lane, without using an attempt. Not a RateLimitError:
 * BullMQ would then stop this worker fetching any lane for the rest of its limiter's second.
 */
export async function backToWait(job: Job, token: string | undefined): Promise<never> {
  await job.moveToWait(token);
  throw new WaitingError();
}

/**
 * Stops this worker fetching the account's jobs for `delayMs` and hands the job back. A pause
 * another process stored (`source` undefined) was counted where it began.
 */
export async function pauseWorker(
  worker: () => Worker,
  metrics: PipelineMetrics,
  account: string,
  delayMs: number,
  source: "upstream" | "local" | undefined,
): Promise<never> {
  if (source !== undefined) {
    metrics.rateLimitPauses.inc({ account, source });
    metrics.rateLimitPauseSeconds.inc({ account, source }, delayMs / 1000);
  }
  await worker().rateLimit(delayMs);
  throw new RateLimitError();
}

/**
 * The workers are shutting down and this job's request was never sent: it goes back to the
 * queue as it was (no "sent" mark), without using an attempt.
 */
export async function handBack(
  deps: Pick<ProcessorDeps, "writes" | "logger">,
  run: JobRun,
): Promise<never> {
  await dropSentRecord(deps, run);
  deps.logger.info({ ...run.log, outcome: "handed_back" }, "shutting down: job handed back unsent");
  throw new RateLimitError();
}

/**
 * The gate recorded this run's request of a kind without a key as "sent" when it cleared it;
 * the request provably had no effect (never left, or refused before it was processed), so the
 * record goes and a later run (or a replay) may send it.
 */
export async function dropSentRecord(
  deps: Pick<ProcessorDeps, "writes">,
  run: JobRun,
): Promise<void> {
  const { job, token, sentKey } = run;
  if (sentKey !== undefined) await deps.writes.write(job, token, job.data, { dropSent: sentKey });
}
