import { type Job, UnrecoverableError } from "bullmq";
import type { JobData } from "../queues/job-data.js";
import type { JobEnvelope } from "../queues/job-envelope.js";
import { JOB_KINDS } from "../queues/job-kinds.js";
import { rowMoney } from "../queues/job-money.js";
import { paymentFingerprint } from "../queues/payment-fingerprint.js";
import { endsCompleted, type JobResult } from "../results/job-result.js";
import type { RecheckTarget } from "../results/recheck.js";
import { ATTR, SPAN } from "../tracing/job-spans.js";
import type { SpanNotes } from "../tracing/job-tracer.js";
import { jobFacts } from "./job-run.js";
import type { ProcessorDeps } from "./processor-deps.js";

/** What a step decides of a job's end; `finishJob` adds what every result carries. */
export type Ending = Omit<
  JobResult,
  | "jobId"
  | "kind"
  | "account"
  | "idempotencyKey"
  | "attempts"
  | "enqueuedAt"
  | "finishedAt"
  | "durationMs"
>;

export type FinishDeps = Pick<
  ProcessorDeps,
  "accounts" | "results" | "metrics" | "logger" | "onResult" | "tracer"
>;

/** Thrown for a job whose terminal result is a failure, so that it lands in the dead letters. */
export function deadLetter(result: JobResult): UnrecoverableError {
  return new UnrecoverableError(
    `${result.result}: ${result.code ?? ""} ${result.message ?? ""}`.trim(),
  );
}

/**
 * Emits the job's one terminal result (a result an earlier run emitted wins) and ends the job:
 * completed with no return value (the result lives in its marker and on the stream, so a copy
 * in each retained job's hash would only cost Redis memory), or dead-lettered.
 */
export function finishJob(
  deps: FinishDeps,
  job: Job<JobData>,
  envelope: JobEnvelope,
  ending: Ending,
  reversed = false,
): Promise<void> {
  return deps.tracer.span(SPAN.result, jobFacts(job), (notes) =>
    recordResult(deps, job, envelope, ending, notes, reversed),
  );
}

/**
 * What a payout's re-checks need, if its kind is re-checked after success: its sub-account, and
 * whether one is due at once.
 */
function recheckTarget(
  envelope: JobEnvelope,
  ending: Ending,
  reversed: boolean,
): RecheckTarget | undefined {
  // Only a success is re-checked; a job whose envelope failed its checks may lack any part.
  if (ending.result !== "succeeded") return undefined;
  if ((JOB_KINDS[envelope.kind] as { rechecked?: boolean } | undefined)?.rechecked !== true) {
    return undefined;
  }
  const params = (envelope.request as { params?: { subAccountId?: unknown } } | undefined)?.params;
  const subAccountId = typeof params?.subAccountId === "string" ? params.subAccountId : undefined;
  return { subAccountId, now: reversed };
}

async function recordResult(
  deps: FinishDeps,
  job: Job<JobData>,
  envelope: JobEnvelope,
  ending: Ending,
  notes: SpanNotes,
  reversed: boolean,
): Promise<void> {
  const now = Date.now();
  const result = resultOf(job, envelope, ending, now);
  const first = await deps.results.emit(result, {
    recheck: recheckTarget(envelope, ending, reversed),
    money: rowMoney(envelope.request),
    payment: paymentFingerprint(envelope.kind, envelope.request),
  });
  const recorded = first
    ? result
    : ((await deps.results.get(result.account, result.jobId)) ?? result);
  notes.note({
    [ATTR.result]: recorded.result,
    ...(recorded.code !== undefined && { [ATTR.resultCode]: recorded.code }),
  });
  if (first) {
    countFinished(deps, job, envelope, result, now);
    await deps.onResult?.(result);
  }
  if (!endsCompleted(recorded.result)) throw deadLetter(recorded);
}

function resultOf(
  job: Job<JobData>,
  envelope: JobEnvelope,
  ending: Ending,
  now: number,
): JobResult {
  return {
    jobId: job.id as string,
    kind: envelope.kind,
    account: envelope.account,
    idempotencyKey: envelope.idempotencyKey,
    ...(envelope.batchId !== undefined && { batchId: envelope.batchId }),
    ...(envelope.row !== undefined && { row: envelope.row }),
    ...(envelope.reference !== undefined && { reference: envelope.reference }),
    ...ending,
    attempts: job.attemptsMade + 1,
    enqueuedAt: new Date(job.timestamp).toISOString(),
    finishedAt: new Date(now).toISOString(),
    durationMs: now - job.timestamp,
  };
}

/** The metrics and the log line of a result this run emitted first. */
function countFinished(
  deps: Pick<ProcessorDeps, "accounts" | "metrics" | "logger">,
  job: Job<JobData>,
  envelope: JobEnvelope,
  result: JobResult,
  now: number,
): void {
  const { metrics } = deps;
  const labels = {
    account: deps.accounts.has(envelope.account) ? envelope.account : "unknown",
    kind: envelope.kind in JOB_KINDS ? envelope.kind : "unknown",
    result: result.result,
  };
  metrics.jobsFinished.inc({ queue: job.queueName, ...labels });
  if (result.result !== "succeeded")
    metrics.jobErrors.inc({ ...labels, code: result.code ?? "none" });
  metrics.jobDuration.observe(labels, result.durationMs / 1000);
  metrics.jobProcessingDuration.observe(
    labels,
    (now - (job.data.state?.firstStartedAt ?? job.processedOn ?? now)) / 1000,
  );
  deps.logger.info(
    {
      jobId: result.jobId,
      key: result.idempotencyKey,
      kind: result.kind,
      account: result.account,
      attempt: result.attempts,
      outcome: result.result,
      code: result.code,
      upstreamId: result.upstreamId,
    },
    "job finished",
  );
}
