import type { JobState } from "../queues/job-data.js";
import type { RetryReason } from "./classify.js";
import type { Decision } from "./decision.js";
import { type FinishDeps, finishJob } from "./finish-job.js";
import { moveLater } from "./job-moves.js";
import type { JobRun } from "./job-run.js";
import type { ProcessorDeps } from "./processor-deps.js";

/** Lookups after a PENDING answer: the first after the configured delay, each next one twice as long, up to this. */
export const CONFIRM_MAX_DELAY_MS = 30_000;
/** A lookup after retries ran out waits this long, so the provider can finish what it started. */
export const RECONCILE_DELAY_MS = 1_000;

export function confirmDelayMs(lookups: number, firstDelayMs: number): number {
  return Math.min(Math.max(CONFIRM_MAX_DELAY_MS, firstDelayMs), firstDelayMs * 2 ** lookups);
}

type LookUpDeps = FinishDeps & Pick<ProcessorDeps, "writes" | "pipeline">;

const errorCodeOf = (error: unknown): string =>
  typeof (error as { code?: unknown }).code === "string"
    ? (error as { code: string }).code
    : "unexpected";

const pastDeadline = (deps: LookUpDeps, state: JobState) =>
  Date.now() - (state.pendingSince ?? Date.now()) > deps.pipeline.confirmDeadlineMs;

/** A PENDING answer (or a lookup that could not tell yet): looked up again later, until the deadline. */
export function confirmLater(
  deps: LookUpDeps,
  run: JobRun,
  decision: Decision,
  upstreamId: string | undefined,
): Promise<void> {
  const { state } = run;
  const { outcome, reading } = decision;
  // The deadline counts from the first PENDING and is checked only after a lookup.
  if (state.phase === "confirm" && pastDeadline(deps, state))
    return giveUp(deps, run, upstreamId, reading?.upstreamStatus ?? state.upstreamStatus);
  const lookups = state.phase === "confirm" ? (state.lookups ?? 0) + 1 : 0;
  const lookupError = outcome.type === "error" ? errorCodeOf(outcome.error) : undefined;
  deps.logger.info(
    {
      ...run.log,
      outcome: "pending",
      upstreamId,
      lookups,
      ...(lookupError && { lookupError }),
    },
    "job pending, confirming later",
  );
  return moveLater(
    deps.writes,
    run.job,
    run.token,
    {
      phase: "confirm",
      upstreamId,
      // The provider's last word, which may be in none of the profile's lists.
      upstreamStatus: reading?.upstreamStatus ?? state.upstreamStatus,
      // The first PENDING: a lookup of an unknown outcome that answers PENDING starts it now.
      pendingSince: state.phase === "confirm" ? (state.pendingSince ?? Date.now()) : Date.now(),
      lookups,
      firstStartedAt: decision.firstStartedAt,
    },
    confirmDelayMs(lookups, deps.pipeline.confirmFirstDelayMs),
  );
}

/** Retries ran out with the outcome unknown: the outcome is looked up, within the deadline. */
export function reconcileLater(
  deps: LookUpDeps,
  run: JobRun,
  decision: Decision,
  upstreamId: string | undefined,
  reason: RetryReason,
): Promise<void> {
  const { state } = run;
  if (state.phase === "reconcile" && pastDeadline(deps, state))
    return giveUp(deps, run, upstreamId, undefined, reason);
  deps.logger.warn(
    { ...run.log, outcome: "reconcile", reason },
    "retries exhausted with the outcome unknown; looking it up",
  );
  return moveLater(
    deps.writes,
    run.job,
    run.token,
    {
      phase: "reconcile",
      pendingSince: state.phase === "reconcile" ? state.pendingSince : Date.now(),
      lookups: state.phase === "reconcile" ? (state.lookups ?? 0) + 1 : 0,
      firstStartedAt: decision.firstStartedAt,
    },
    RECONCILE_DELAY_MS,
  );
}

/** The end of confirming a PENDING answer, or of looking up an outcome still unknown. */
function giveUp(
  deps: LookUpDeps,
  run: JobRun,
  upstreamId: string | undefined,
  upstreamStatus: string | undefined,
  lastReason?: string,
): Promise<void> {
  const { state } = run;
  const confirming = state.phase === "confirm";
  const deadline = deps.pipeline.confirmDeadlineMs;
  // The provider's last word, which need not be PENDING (a status in none of the lists).
  const status = upstreamStatus ?? "PENDING";
  return finishJob(deps, run.job, run.envelope, {
    result: "needs_reconciliation",
    code: confirming ? "confirm_deadline" : "outcome_unknown",
    message: confirming
      ? `still ${status} after ${deadline} ms and ${(state.lookups ?? 0) + 1} lookups`
      : `the outcome was still unknown after ${deadline} ms of lookups (last: ${lastReason})`,
    ...(upstreamId !== undefined && { upstreamId }),
    ...(confirming && { upstreamStatus: status }),
  });
}
