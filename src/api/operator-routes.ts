import type { Job } from "bullmq";
import type { JobData } from "../queues/job-data.js";
import { addAccountQueryRoute } from "./account-query-route.js";
import type { ApiRouter } from "./api-app.js";
import { ApiError, notFound } from "./api-error.js";
import { accountOf } from "./auth.js";
import {
  AccountParams,
  AccountQuery,
  DeadLetterQuery,
  JobParams,
  PauseBody,
} from "./request-schemas.js";

/**
 * Before a dead letter that may have reached the provider is sent again, the provider is asked
 * (by its id, or the key it echoes): found made, the job is resolved with that evidence instead
 * of being sent (the resolution is answered); found failed or not found, it is replayed; an
 * answer that decides nothing refuses the replay (409 outcome_unknown), as a blind resend could
 * pay twice. Without lookups (no provider to ask) the replay goes on as asked.
 */
async function lookUpBeforeReplay(
  router: ApiRouter,
  account: string,
  job: Job<JobData>,
  name: string,
): Promise<unknown> {
  const { lookups, results, resolutions } = router.deps;
  const jobId = job.id as string;
  if (lookups === undefined) return undefined;
  const result = await results.get(account, jobId);
  const state = job.data.state;
  const mayHaveReached =
    state?.possiblySent === true ||
    (state !== undefined && state.phase !== "submit") ||
    result?.result === "needs_reconciliation";
  if (!mayHaveReached || result === undefined) return undefined;
  const found = await lookups.find(job.data.envelope, result.upstreamId ?? state?.upstreamId, {
    from: job.timestamp,
    to: job.finishedOn ?? Date.now(),
  });
  if (found.state === "unknown")
    throw new ApiError(
      "outcome_unknown",
      `job ${jobId} may have reached the provider, and the provider's answer decides nothing (${found.why}): resolve it by hand (POST /v1/jobs/${jobId}/resolve) once its outcome is known`,
    );
  if (found.state !== "succeeded") return undefined;
  const resolution = await resolutions.byLookup(result, { ...found, to: "succeeded" }, name);
  if (resolution === undefined)
    throw new ApiError(
      "outcome_unknown",
      `job ${jobId} was paid at the provider (${found.upstreamId}); it is not sent again`,
    );
  return resolution;
}

/** Dead letters and replay; pausing and resuming an account's queue. */
export function registerOperatorRoutes(router: ApiRouter): void {
  registerDeadLetterRoutes(router);
  registerAccountRoutes(router);
}

/** Dead letters, listed or found, and their replay. */
function registerDeadLetterRoutes(router: ApiRouter): void {
  const { deadLetters } = router.deps;

  addAccountQueryRoute(
    router,
    {
      url: "/v1/dead-letters",
      summary:
        "Jobs that ended failed, rejected or needs_reconciliation, newest first; or those of one reference or idempotency key",
      query: DeadLetterQuery,
    },
    async (account, { limit = 100, reference, idempotencyKey }) => ({
      account,
      deadLetters:
        reference === undefined && idempotencyKey === undefined
          ? await deadLetters.list(account, 0, limit - 1)
          : await deadLetters.find(account, { reference, idempotencyKey }, limit),
    }),
  );

  router.add(
    {
      method: "POST",
      url: "/v1/dead-letters/:jobId/replay",
      summary: "Run a dead letter again, with the same data and the same idempotency key",
      auth: true,
      permission: "operate",
      params: JobParams,
      query: AccountQuery,
      audit: "dead_letter_replay",
    },
    async ({ caller, params, query, reply, audit }) => {
      audit({ jobId: params.jobId });
      const account = accountOf(caller, query.account);
      audit({ account });
      const replayed = await deadLetters.replay(account, params.jobId, (job) =>
        lookUpBeforeReplay(router, account, job, caller.name),
      );
      if (!replayed) throw notFound(`dead letter ${params.jobId}`);
      if (replayed !== true)
        return reply
          .code(200)
          .send({ jobId: params.jobId, account, replayed: false, resolution: replayed.stopped });
      return reply.code(202).send({ jobId: params.jobId, account, replayed: true });
    },
  );
}

/** The caller's accounts and token; pausing and resuming an account's queue. */
function registerAccountRoutes(router: ApiRouter): void {
  const { pauses } = router.deps;

  router.add(
    {
      method: "GET",
      url: "/v1/accounts",
      summary:
        "The caller's accounts: which are paused (by an operator or a refused key) or held by a provider's 429",
      auth: true,
      permission: "read",
    },
    async ({ caller }) => {
      const paused = new Map((await pauses.list()).map((p) => [p.account, p]));
      const limited = await pauses.rateLimited(caller.accounts);
      const now = Date.now();
      return {
        accounts: caller.accounts.map((alias) => ({
          alias,
          paused: paused.has(alias),
          ...(paused.has(alias) && { pause: paused.get(alias) }),
          ...(limited.has(alias) && {
            rateLimitedUntil: new Date(now + (limited.get(alias) as number)).toISOString(),
          }),
        })),
      };
    },
  );

  router.add(
    {
      method: "GET",
      url: "/v1/me",
      summary: "The calling token: its name, accounts and permissions",
      auth: true,
      permission: "read",
    },
    async ({ caller }) => ({
      name: caller.name,
      accounts: caller.accounts,
      permissions: caller.permissions,
    }),
  );

  router.add(
    {
      method: "POST",
      url: "/v1/accounts/:alias/pause",
      summary: "Pause an account: no worker of any process takes its jobs until it is resumed",
      auth: true,
      permission: "operate",
      params: AccountParams,
      body: PauseBody,
      audit: "account_pause",
    },
    async ({ caller, params, body, audit }) => {
      audit({ account: params.alias });
      const account = accountOf(caller, params.alias);
      await pauses.pause(account, body?.reason ?? "paused by an operator");
      return { alias: account, paused: true };
    },
  );

  router.add(
    {
      method: "POST",
      url: "/v1/accounts/:alias/resume",
      summary: "Resume an account paused by an operator or by an authentication failure",
      auth: true,
      permission: "operate",
      params: AccountParams,
      audit: "account_resume",
    },
    async ({ caller, params, audit }) => {
      audit({ account: params.alias });
      const account = accountOf(caller, params.alias);
      await pauses.resume(account);
      return { alias: account, paused: false };
    },
  );
}
