import type { Worker } from "bullmq";
import { RateLimitError } from "bullmq";
import type { ResultKind } from "../results/job-result.js";
import { mayHaveReached } from "./classify.js";
import type { Decision } from "./decision.js";
import { finishJob } from "./finish-job.js";
import { dropSentRecord, pauseWorker } from "./job-moves.js";
import type { JobRun } from "./job-run.js";
import { confirmLater, reconcileLater } from "./look-up-later.js";
import { holdForFunds } from "./outflow-hold.js";
import type { ProcessorDeps } from "./processor-deps.js";
import { retryWithSameKey } from "./retry-with-same-key.js";

/** The provider's id and status for the job's result: this answer's, else what the job kept. */
function upstreamOf(run: JobRun, decision: Decision) {
  const { reading } = decision;
  const upstreamId = reading?.upstreamId ?? run.state.upstreamId;
  return {
    ...(upstreamId !== undefined && { upstreamId }),
    ...(reading?.upstreamStatus !== undefined && { upstreamStatus: reading.upstreamStatus }),
  };
}

/**
 * Carries out the classifier's decision: the job ends with its result, waits for a lookup,
 * pauses its account, or fails this attempt for BullMQ to retry.
 */
export async function actOnDecision(
  deps: ProcessorDeps,
  worker: () => Worker,
  run: JobRun,
  decision: Decision,
): Promise<void> {
  const { job, envelope } = run;
  const { action, reading } = decision;
  const upstream = upstreamOf(run, decision);
  switch (action.type) {
    case "succeed":
      // A success that already shows a reversal is looked up again at once, where it is recorded.
      return finishJob(
        deps,
        job,
        envelope,
        { result: "succeeded", ...upstream },
        reading?.reversed === true,
      );
    case "fail":
      return finishJob(deps, job, envelope, {
        result: "failed" as ResultKind,
        code: action.code,
        message: action.message,
        ...upstream,
      });
    case "reject":
      return finishJob(deps, job, envelope, {
        result: "rejected",
        code: action.code,
        message: action.message,
      });
    case "needs_reconciliation":
      // Never reached the provider after every attempt: a replay may send it.
      if (!mayHaveReached(decision.outcome)) await dropSentRecord(deps, run);
      return finishJob(deps, job, envelope, {
        result: "needs_reconciliation",
        code: action.code,
        message: action.message,
        ...upstream,
        ...(reading?.upstreamData !== undefined && { upstreamData: reading.upstreamData }),
      });
    case "confirm":
      return confirmLater(deps, run, decision, upstream.upstreamId);
    case "reconcile":
      return reconcileLater(deps, run, decision, upstream.upstreamId, action.reason);
    case "rate_limit":
      return pauseForProviderLimit(deps, worker, run, action.delayMs, action.askedMs);
    case "pause_account":
      return pauseAccount(deps, run, action.message);
    case "hold_funds":
      return holdForFunds(deps, run, action.message);
    case "retry":
      return retryWithSameKey(deps, run, decision, action.reason);
  }
}

/** A 429: no request of the account leaves, from any process, until the provider's delay ends. */
async function pauseForProviderLimit(
  deps: Pick<ProcessorDeps, "gate" | "writes" | "metrics" | "logger">,
  worker: () => Worker,
  run: JobRun,
  delayMs: number,
  askedMs: number | undefined,
): Promise<never> {
  const { account } = run.envelope;
  deps.logger.warn(
    { ...run.log, outcome: "rate_limited", delayMs, ...(askedMs !== delayMs && { askedMs }) },
    "provider rate limit: account paused",
  );
  // Stored where every process's gate reads it: no request of the account leaves meanwhile.
  await deps.gate.pause(account, delayMs);
  // Refused before it was processed: sent again once the pause ends.
  await dropSentRecord(deps, run);
  return pauseWorker(worker, deps.metrics, account, delayMs, "upstream");
}

/** The provider refused the account's key: its work waits until an operator resumes it. */
async function pauseAccount(
  deps: Pick<ProcessorDeps, "pauses" | "writes" | "logger">,
  run: JobRun,
  message: string,
): Promise<never> {
  await deps.pauses.pause(run.envelope.account, message, "key_refused");
  // Refused before it was processed: sent again once the account resumes.
  await dropSentRecord(deps, run);
  deps.logger.error(
    { ...run.log, outcome: "account_paused" },
    "provider refused the account's key: account paused until resumed",
  );
  throw new RateLimitError();
}
