import type { Job } from "bullmq";
import type { JobData } from "../processors/job-processor.js";
import { EnqueueValidationError } from "../queues/enqueue-error.js";
import { jobIdFor } from "../queues/idempotency-key.js";
import type { JobInput } from "../queues/job-envelope.js";
import type { ApiRouter } from "./api-app.js";
import { ApiError, notFound } from "./api-error.js";
import { accountOf, type Caller } from "./auth.js";
import { JobByKeyQuery, JobParams, SubmitJobBody } from "./request-schemas.js";

/** Submitting one job, and a job's status by job id or idempotency key. */
export function registerJobRoutes(router: ApiRouter): void {
  const { producer, queues, results } = router.deps;

  router.add<undefined, undefined, Record<string, unknown> & { account?: string }>(
    {
      method: "POST",
      url: "/v1/jobs",
      summary:
        "Enqueue one job; the same work (same key) enqueued twice is one job. 202 with its job id",
      auth: true,
      body: SubmitJobBody,
    },
    async ({ caller, body, reply }) => {
      const account = accountOf(caller, body.account);
      try {
        const job = await producer.enqueue({ ...body, account } as JobInput);
        return reply.code(202).send(job);
      } catch (error) {
        if (error instanceof EnqueueValidationError)
          throw new ApiError(400, "invalid_job", error.message, {
            details: error.issues.map((i) => ({ ...i, field: `body.${i.field}` })),
          });
        throw error;
      }
    },
  );

  /** A job of one of the caller's accounts; 404 for any other. */
  async function statusOf(caller: Caller, jobId: string, only?: string) {
    const result = await results.get(jobId);
    for (const account of only === undefined ? caller.accounts : [only]) {
      const job = (await queues.get(account)?.getJob(jobId)) as Job<JobData> | undefined;
      if (!job && !(result && result.account === account)) continue;
      const envelope = job?.data.envelope;
      return {
        jobId,
        account,
        kind: envelope?.kind ?? result?.kind,
        idempotencyKey: envelope?.idempotencyKey ?? result?.idempotencyKey,
        batchId: envelope?.batchId ?? result?.batchId,
        reference: envelope?.reference ?? result?.reference,
        state: job ? await job.getState() : "removed",
        attempts: job?.attemptsStarted ?? result?.attempts ?? 0,
        result: result ?? null,
      };
    }
    throw notFound(`job ${jobId}`);
  }

  router.add<{ jobId: string }>(
    {
      method: "GET",
      url: "/v1/jobs/:jobId",
      summary: "A job's state in its queue and its terminal result, if it has one",
      auth: true,
      params: JobParams,
    },
    async ({ caller, params }) => statusOf(caller, params.jobId),
  );

  router.add<undefined, { idempotencyKey: string; account?: string }>(
    {
      method: "GET",
      url: "/v1/jobs",
      summary: "A job's status by its idempotency key",
      auth: true,
      query: JobByKeyQuery,
    },
    async ({ caller, query }) => {
      const account = accountOf(caller, query.account);
      return statusOf(caller, jobIdFor(account, query.idempotencyKey), account);
    },
  );
}
