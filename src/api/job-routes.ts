import type { Job } from "bullmq";
import { z } from "zod";
import { validate } from "../contract/field-issues.js";
import { IdempotencyKey, REPLAY_HEADER } from "../contract/headers.js";
import {
  EnqueueValidationError,
  IdempotencyKeyReusedError,
  PaymentRepeatedError,
} from "../queues/enqueue-error.js";
import { jobIdFor } from "../queues/idempotency-key.js";
import type { JobData } from "../queues/job-data.js";
import type { JobInput } from "../queues/job-envelope.js";
import { addAccountQueryRoute } from "./account-query-route.js";
import type { ApiRouter } from "./api-app.js";
import { ApiError, invalidRequest, notFound } from "./api-error.js";
import { accountOf, type Caller } from "./auth.js";
import { JobByKeyQuery, JobParams, SubmitJobBody } from "./request-schemas.js";

/** Submitting one job, and a job's status by job id or idempotency key. */
export function registerJobRoutes(router: ApiRouter): void {
  const { producer, queues, results } = router.deps;

  router.add(
    {
      method: "POST",
      url: "/v1/jobs",
      summary:
        "Enqueue one job; the same work (same key) enqueued twice is one job. 202 with its job id, and the payments it repeats under other keys, if any",
      auth: true,
      permission: "submit",
      body: SubmitJobBody,
      headers: z.object({ [KEY_HEADER]: IdempotencyKey.optional() }),
      audit: "enqueue",
    },
    async ({ caller, body, request, reply, audit }) => {
      const account = accountOf(caller, body.account);
      audit({ account });
      const idempotencyKey = keyOf(request.headers[KEY_HEADER], body.idempotencyKey);
      try {
        const { job, replayed } = await producer.enqueueKeyed(
          // Typed by kind only once checked: the producer checks the request against its
          // kind's contract and answers EnqueueValidationError (below) for what does not hold.
          {
            ...body,
            account,
            ...(idempotencyKey !== undefined && { idempotencyKey }),
          } as JobInput,
          caller.name,
        );
        audit({ jobId: job.jobId, idempotencyKey: job.idempotencyKey, replayed });
        if (replayed) return reply.code(200).header(REPLAY_HEADER, "true").send(job);
        return reply.code(202).send(job);
      } catch (error) {
        if (error instanceof EnqueueValidationError)
          throw new ApiError("invalid_job", error.message, {
            details: error.issues.map((i) => ({ ...i, field: `body.${i.field}` })),
          });
        // Refused by the account's repeat policy: a conflict with payments made, as a reused key is.
        if (error instanceof PaymentRepeatedError)
          throw new ApiError(error.code, error.message, {
            details: [{ field: "body.request.body", rule: error.rule }],
            repeats: error.matches,
          });
        if (error instanceof IdempotencyKeyReusedError) {
          audit({ jobId: error.jobId, idempotencyKey: error.idempotencyKey });
          // The key is named where it came from: the header, or the body.
          const field =
            request.headers[KEY_HEADER] !== undefined ? `headers.${KEY_HEADER}` : "idempotencyKey";
          throw new ApiError(error.code, error.message, {
            details: [{ field, rule: `already used by job ${error.jobId}` }],
            jobId: error.jobId,
          });
        }
        throw error;
      }
    },
  );

  /** A job of one of the caller's accounts; 404 for any other. */
  async function statusOf(caller: Caller, jobId: string, only?: string) {
    for (const account of only === undefined ? caller.accounts : [only]) {
      const job = await queues.get(account)?.getJob(jobId);
      const result = await results.get(account, jobId);
      if (!job && result === undefined) continue;
      const envelope = job?.data?.envelope;
      const hold = await router.deps.jobs.holdOf(account, jobId);
      return {
        jobId,
        account,
        kind: envelope?.kind ?? result?.kind,
        idempotencyKey: envelope?.idempotencyKey ?? result?.idempotencyKey,
        batchId: envelope?.batchId ?? result?.batchId,
        reference: envelope?.reference ?? result?.reference,
        state: await stateOf(job, hold, result !== undefined),
        attempts: job?.attemptsStarted ?? result?.attempts ?? 0,
        ...(hold?.notBefore !== undefined && { notBefore: hold.notBefore }),
        ...(hold?.submittedBy !== undefined && { submittedBy: hold.submittedBy }),
        ...(hold?.repeats !== undefined && { repeats: repeatsOfHold(hold.repeats) }),
        ...(hold?.approval !== undefined && {
          approval: {
            state: hold.approval,
            expiresAt: hold.approvalExpiresAt,
            decidedBy: hold.approvedBy ?? hold.rejectedBy,
            decidedAt: hold.approvedAt ?? hold.rejectedAt,
          },
        }),
        result: result ?? null,
        reversal: (await results.reversalOf(account, jobId)) ?? null,
        ...(await router.deps.resolutions.of(account, jobId)),
      };
    }
    throw notFound(`job ${jobId}`);
  }

  registerJobControls(router);

  router.add(
    {
      method: "GET",
      url: "/v1/jobs/:jobId",
      summary: "A job's state in its queue and its terminal result, if it has one",
      auth: true,
      permission: "read",
      params: JobParams,
    },
    async ({ caller, params }) => statusOf(caller, params.jobId),
  );

  addAccountQueryRoute(
    router,
    { url: "/v1/jobs", summary: "A job's status by its idempotency key", query: JobByKeyQuery },
    async (account, query, caller) =>
      statusOf(caller, jobIdFor(account, query.idempotencyKey), account),
  );
}

/**
 * A job's state as its owner reads it: held before it may run (`awaiting_approval`,
 * `scheduled`), BullMQ's otherwise (a job waiting in its lane, a BullMQ priority, is
 * `waiting`), or `removed`.
 */
async function stateOf(
  job: Job<JobData> | undefined,
  hold: Record<string, string> | undefined,
  finished: boolean,
): Promise<string> {
  if (!job) return "removed";
  const state = (await job.getState()).replace("prioritized", "waiting");
  if (finished || state !== "delayed" || hold === undefined) return state;
  if (hold.approval === "pending") return "awaiting_approval";
  return Number(hold.notBeforeMs ?? 0) > Date.now() ? "scheduled" : state;
}

/** Cancel a job not sent yet; approve or reject a job awaiting approval. */
function registerJobControls(router: ApiRouter): void {
  const controls = [
    ["cancel", "operate", "Cancel a job not sent yet: it ends `cancelled` (job_cancelled)"],
    ["approve", "approve", "Approve a job awaiting approval (not by the token that enqueued it)"],
    ["reject", "approve", "Reject a job awaiting approval: it ends `cancelled` (job_rejected)"],
  ] as const;
  for (const [action, permission, summary] of controls)
    router.add(
      {
        method: "POST",
        url: `/v1/jobs/:jobId/${action}`,
        summary,
        auth: true,
        permission,
        params: JobParams,
        audit: `job_${action}`,
      },
      async ({ caller, params, audit }) => {
        audit({ jobId: params.jobId });
        const { account, job } = await ownJob(router, caller, params.jobId);
        audit({ account });
        const { jobs } = router.deps;
        if (action === "cancel") return await jobs.cancel(account, job);
        if (action === "approve") return await jobs.approve(account, job, caller.name);
        return await jobs.reject(account, job, caller.name);
      },
    );
}

/** A job of one of the caller's accounts still in its queue; 404 for any other. */
async function ownJob(
  router: ApiRouter,
  caller: Caller,
  jobId: string,
): Promise<{ account: string; job: Job<JobData> }> {
  for (const account of caller.accounts) {
    const job = await router.deps.queues.get(account)?.getJob(jobId);
    if (job) return { account, job };
  }
  throw notFound(`job ${jobId}`);
}

/** The IETF draft's header for the key; POST /v1/jobs also takes it in the body. */
const KEY_HEADER = "idempotency-key";

/** The key of a job request: the header's or the body's; both given must agree. */
function keyOf(header: string | string[] | undefined, inBody: string | undefined) {
  if (header === undefined) return inBody;
  const parsed = validate(IdempotencyKey, header);
  if (!parsed.success)
    throw invalidRequest(
      parsed.issues.map((i) => ({ field: "headers.idempotency-key", rule: i.rule })),
    );
  if (inBody !== undefined && inBody !== parsed.data)
    throw invalidRequest([
      {
        field: "headers.idempotency-key",
        rule: "must equal body.idempotencyKey when both are given",
      },
    ]);
  return parsed.data;
}

/** The payments a held job repeats, as its hold keeps them (JSON). */
function repeatsOfHold(json: string): unknown[] {
  try {
    return JSON.parse(json) as unknown[];
  } catch {
    return [];
  }
}
