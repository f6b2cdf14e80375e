import { DelayedError } from "bullmq";
import { rowMoney } from "../queues/job-money.js";
import { runFromDelayed } from "../queues/producer.js";
import { dropSentRecord } from "./job-moves.js";
import type { JobRun } from "./job-run.js";
import type { ProcessorDeps } from "./processor-deps.js";
import type { OutflowHold } from "./rate-gate.js";

/**
 * A job held until an operator resumes its lane asks again this often meanwhile (the resume
 * moves it at once).
 */
const HELD_UNTIL_RESUMED_RECHECK_MS = 3_600_000;

type HoldDeps = Pick<
  ProcessorDeps,
  "results" | "metrics" | "logger" | "laneHolds" | "outflow" | "writes"
>;

/**
 * The gate held a payout's request for its currency's lane or a velocity limit: the job goes
 * back to BullMQ's delayed set, unsent and without using an attempt, until the window makes
 * room or its lane resumes (which moves it at once). The request that began a velocity hold
 * announces it, once.
 */
export async function holdForOutflow(
  deps: HoldDeps,
  run: JobRun,
  hold: OutflowHold,
): Promise<never> {
  const { job, token, envelope } = run;
  const { account } = envelope;
  const currency = rowMoney(envelope.request)?.currency ?? "";
  deps.metrics.outflowHolds.inc({ account, currency, cause: hold.cause });
  if (hold.cause === "velocity" && hold.began !== undefined) {
    deps.metrics.outflowHoldsBegun.inc({ account, currency, cause: "velocity" });
    await deps.results.appendEvent(account, "account.velocity_hold", {
      account,
      currency,
      limit: hold.began,
      jobId: job.id,
      heldForMs: hold.ms,
    });
    deps.logger.warn(
      { ...run.log, currency, limit: hold.began, heldForMs: hold.ms },
      "velocity limit reached: the account's payouts in this currency are held",
    );
  }
  await job.moveToDelayed(
    Date.now() + (hold.ms > 0 ? hold.ms : HELD_UNTIL_RESUMED_RECHECK_MS),
    token,
  );
  await runIfEnded(deps, run, hold.cause, currency);
  throw new DelayedError();
}

/**
 * A release, resume or cancel that came while this job was still moving to the delayed set
 * could not move it: once there, it looks whether its hold still keeps it, and runs at once if
 * not (a cancelled job is gone, and moves nowhere).
 */
async function runIfEnded(
  deps: HoldDeps,
  run: JobRun,
  cause: OutflowHold["cause"],
  currency: string,
): Promise<void> {
  const { job, envelope } = run;
  if (await deps.laneHolds.holds(envelope.account, cause, currency, job.id as string)) return;
  await runFromDelayed(job, 0);
}

/**
 * The provider refused a payout for insufficient funds: nothing moved, so the job is held,
 * first in its currency's lane, which the gate then holds for every process (other currencies
 * and accounts go on) until an operator resumes it or the retry interval passes. The refusal
 * that began the hold announces it, once.
 */
export async function holdForFunds(deps: HoldDeps, run: JobRun, message: string): Promise<never> {
  const { job, token, envelope } = run;
  const { account } = envelope;
  const currency = rowMoney(envelope.request)?.currency ?? "";
  const retryMs = deps.outflow.fundsRetryMs;
  const began = await deps.laneHolds.holdForFunds(account, currency, job.id as string, retryMs);
  deps.metrics.outflowHolds.inc({ account, currency, cause: "insufficient_funds" });
  if (began) {
    deps.metrics.outflowHoldsBegun.inc({ account, currency, cause: "insufficient_funds" });
    await deps.results.appendEvent(account, "account.funds_hold", {
      account,
      currency,
      jobId: job.id,
      message,
      ...(retryMs !== undefined && { retryAfterMs: retryMs }),
    });
    deps.logger.warn(
      { ...run.log, currency, outcome: "insufficient_funds" },
      "insufficient funds: the account's payouts in this currency are held until it is resumed",
    );
  }
  // Refused before it was processed: sent again, under the same key, once the lane resumes.
  await dropSentRecord(deps, run);
  await job.moveToDelayed(Date.now() + (retryMs ?? HELD_UNTIL_RESUMED_RECHECK_MS), token);
  await runIfEnded(deps, run, "insufficient_funds", currency);
  throw new DelayedError();
}
