import type { Job } from "bullmq";
import type { HoldCause } from "../outflow/lane-holds.js";
import { JobControlError } from "../queues/job-controls.js";
import type { JobData } from "../queues/job-data.js";
import type { ApiRouter } from "./api-app.js";
import { ApiError } from "./api-error.js";
import { accountOf } from "./auth.js";
import { AccountParams, HoldCancelBody, LaneParams } from "./request-schemas.js";

/**
 * An account's currency lanes held by a velocity limit or insufficient funds
 * (docs/safety.md): what is held and the audit trail; an approver's release of velocity-held
 * work (never by whoever submitted any of it), an operator's resume after insufficient funds,
 * and an approver's cancel of held work.
 */
export function registerHoldRoutes(router: ApiRouter): void {
  registerHoldList(router);
  registerRelease(router);
  registerResume(router);
  registerCancel(router);
}

/** Whoever enqueued the job: its batch's submitter, or its own hold's. */
async function submitterOf(
  router: ApiRouter,
  account: string,
  jobId: string,
): Promise<string | undefined> {
  const job = await router.deps.queues.get(account)?.getJob(jobId);
  const batchId = job?.data?.envelope?.batchId;
  return router.deps.laneHolds.submitterOf(account, jobId, batchId);
}

/**
 * Ends a lane's hold, velocity's by a release or insufficient funds' by a resume, says so on
 * the results stream, and moves the jobs it held to run now, first held first: how many run.
 * A job still on its way to the delayed set cannot be moved, but runs once there (it finds
 * its hold ended): it counts as well; one that ended meanwhile does not.
 */
async function endAndRun(
  router: ApiRouter,
  account: string,
  currency: string,
  action: "release" | "resume",
  by: string,
  jobIds: readonly string[],
): Promise<number> {
  const { laneHolds, results } = router.deps;
  const cause: HoldCause = action === "release" ? "velocity" : "insufficient_funds";
  const held = await laneHolds.end(account, cause, currency, action, by, jobIds);
  const type = action === "release" ? "account.velocity_released" : "account.funds_resumed";
  await results.appendEvent(account, type, { account, currency, by, jobs: held.length });
  let released = 0;
  for (const jobId of held)
    if (
      (await router.deps.producer.release(account, jobId, 0)) ||
      (await stillToRun(router, account, jobId))
    )
      released += 1;
  return released;
}

/**
 * Whether a job exists, has not ended and was not cancelled by itself (a worker holding it ends
 * it cancelled). One whose batch was cancelled may still count: it too ends cancelled, unsent.
 */
async function stillToRun(router: ApiRouter, account: string, jobId: string): Promise<boolean> {
  const job = await router.deps.queues.get(account)?.getJob(jobId);
  if (job === undefined) return false;
  const state = await job.getState();
  if (state === "completed" || state === "failed" || state === "unknown") return false;
  return (await router.deps.jobs.holdOf(account, jobId))?.state !== "cancelled";
}

/** Cancels a job enqueued alone; false when it already has its result. */
async function cancelOne(
  jobs: ApiRouter["deps"]["jobs"],
  account: string,
  job: Job<JobData>,
): Promise<boolean> {
  try {
    await jobs.cancel(account, job);
    return true;
  } catch (error) {
    if (error instanceof JobControlError && error.code === "job_not_cancellable") return false;
    throw error;
  }
}

function registerHoldList(router: ApiRouter): void {
  const { laneHolds } = router.deps;
  router.add(
    {
      method: "GET",
      url: "/v1/accounts/:alias/holds",
      summary:
        "An account's currency lanes held by a velocity limit or insufficient funds, the jobs each holds, and the audit trail of releases, resumes and cancels",
      auth: true,
      permission: "read",
      params: AccountParams,
    },
    async ({ caller, params }) => {
      const account = accountOf(caller, params.alias);
      const [holds, audit] = await Promise.all([laneHolds.list(account), laneHolds.audit(account)]);
      return { alias: account, holds, audit };
    },
  );
}

function registerRelease(router: ApiRouter): void {
  const { laneHolds } = router.deps;
  router.add(
    {
      method: "POST",
      url: "/v1/accounts/:alias/holds/:currency/release",
      summary:
        "Release the work a velocity limit holds in a currency: each held job passes the limit once (not by a token that submitted any of it); later work is held again until the window allows it",
      auth: true,
      permission: "approve",
      params: LaneParams,
      audit: "velocity_release",
    },
    async ({ caller, params, audit }) => {
      audit({ account: params.alias, currency: params.currency });
      const account = accountOf(caller, params.alias);
      const held = await laneHolds.heldJobs(account, "velocity", params.currency);
      for (const jobId of held)
        if ((await submitterOf(router, account, jobId)) === caller.name)
          throw new ApiError(
            "own_work",
            `job ${jobId} held in ${params.currency} was submitted by this token: another one must release it`,
          );
      // Exactly the jobs checked above: any held since waits for a release of its own.
      return {
        alias: account,
        currency: params.currency,
        released: await endAndRun(router, account, params.currency, "release", caller.name, held),
      };
    },
  );
}

function registerResume(router: ApiRouter): void {
  router.add(
    {
      method: "POST",
      url: "/v1/accounts/:alias/holds/:currency/resume",
      summary:
        "Resume a currency lane held for insufficient funds (once the wallet is funded): the refused job goes first, then the rest",
      auth: true,
      permission: "operate",
      params: LaneParams,
      audit: "funds_resume",
    },
    async ({ caller, params, audit }) => {
      audit({ account: params.alias, currency: params.currency });
      const account = accountOf(caller, params.alias);
      const held = await router.deps.laneHolds.heldJobs(
        account,
        "insufficient_funds",
        params.currency,
      );
      return {
        alias: account,
        currency: params.currency,
        resumed: await endAndRun(router, account, params.currency, "resume", caller.name, held),
      };
    },
  );
}

function registerCancel(router: ApiRouter): void {
  const { laneHolds, queues, jobs } = router.deps;
  router.add(
    {
      method: "POST",
      url: "/v1/accounts/:alias/holds/:currency/cancel",
      summary:
        "Cancel the jobs enqueued alone that a hold keeps in a currency (cause velocity or insufficient_funds): each ends cancelled, none is sent; a batch's held rows are listed, to cancel with their batch",
      auth: true,
      permission: "approve",
      params: LaneParams,
      body: HoldCancelBody,
      audit: "hold_cancel",
    },
    async ({ caller, params, body, audit }) => {
      audit({ account: params.alias, currency: params.currency, cause: body.cause });
      const account = accountOf(caller, params.alias);
      const cause: HoldCause = body.cause;
      const ended: string[] = [];
      const kept: { jobId: string; batchId: string }[] = [];
      let cancelled = 0;
      for (const jobId of await laneHolds.heldJobs(account, cause, params.currency)) {
        const job = await queues.get(account)?.getJob(jobId);
        const batchId = job?.data?.envelope?.batchId;
        // A batch's rows are cancelled with their batch, which keeps its counts and its report.
        if (batchId !== undefined) kept.push({ jobId, batchId });
        else {
          // Gone, or with its result already (ended meanwhile): only its place in the hold is
          // left. Any other failure throws, and the job stays held.
          if (job !== undefined && (await cancelOne(jobs, account, job))) cancelled += 1;
          ended.push(jobId);
        }
      }
      await laneHolds.end(account, cause, params.currency, "cancel", caller.name, ended);
      return { alias: account, currency: params.currency, cause, cancelled, batchRows: kept };
    },
  );
}
