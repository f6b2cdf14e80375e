import { addAccountQueryRoute } from "./account-query-route.js";
import type { ApiRouter } from "./api-app.js";
import { notFound } from "./api-error.js";
import type { Caller } from "./auth.js";
import { AccountListQuery, JobParams, ResolveBody } from "./request-schemas.js";

/** The status each refusal of a resolution answers. */

/**
 * Resolving by hand a job moneyq left to reconciliation (or recorded failed), with evidence:
 * the operator's word and note, approved by a second person where the account's policy asks
 * for one; and the account's audit trail of resolutions (docs/reconciliation.md).
 */
export function registerResolutionRoutes(router: ApiRouter): void {
  const { results, resolutions } = router.deps;

  /** The account of one of the caller's jobs that has a result; 404 for any other. */
  async function accountOfJob(caller: Caller, jobId: string): Promise<string> {
    for (const account of caller.accounts)
      if ((await results.get(account, jobId)) !== undefined) return account;
    throw notFound(`job ${jobId}`);
  }

  router.add(
    {
      method: "POST",
      url: "/v1/jobs/:jobId/resolve",
      summary:
        "Resolve a job that ended needs_reconciliation or failed: the provider made it (succeeded) or not (failed), with a note; 202 while a second person's approval is needed",
      auth: true,
      permission: "operate",
      params: JobParams,
      body: ResolveBody,
      audit: "job_resolve",
    },
    async ({ caller, params, body, reply, audit }) => {
      audit({ jobId: params.jobId });
      const account = await accountOfJob(caller, params.jobId);
      audit({ account });
      const asked = {
        to: body.result,
        note: body.note,
        ...(body.upstreamId !== undefined && { upstreamId: body.upstreamId }),
      };
      const outcome = await resolutions.request(account, params.jobId, asked, caller.name);
      if (outcome.state === "awaiting_approval") reply.code(202);
      return { jobId: params.jobId, account, ...outcome };
    },
  );

  router.add(
    {
      method: "POST",
      url: "/v1/jobs/:jobId/resolve/approve",
      summary: "Approve a resolution by hand another person asked for (never the one who asked)",
      auth: true,
      permission: "approve",
      params: JobParams,
      audit: "job_resolve_approve",
    },
    async ({ caller, params, audit }) => {
      audit({ jobId: params.jobId });
      const account = await accountOfJob(caller, params.jobId);
      audit({ account });
      const outcome = await resolutions.approve(account, params.jobId, caller.name);
      return { jobId: params.jobId, account, ...outcome };
    },
  );

  addAccountQueryRoute(
    router,
    {
      url: "/v1/resolutions",
      summary: "The account's audit trail of resolutions, automatic and by hand, newest first",
      query: AccountListQuery,
    },
    async (account, query) => ({
      account,
      resolutions: await resolutions.trail(account, query.limit ?? 100),
    }),
  );
}
