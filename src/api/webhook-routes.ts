import type { ApiRouter } from "./api-app.js";
import { ApiError, notFound } from "./api-error.js";
import { accountOf, type Caller } from "./auth.js";
import { AccountListQuery, WebhookEventParams } from "./request-schemas.js";

/**
 * The webhook endpoint's state and the deliveries that gave up: listed and sent again per
 * account; resuming the endpoint after a 410 Gone needs a token of every account, since the
 * endpoint carries all of them.
 */
export function registerWebhookRoutes(router: ApiRouter): void {
  const { webhooks, queues } = router.deps;

  router.add(
    {
      method: "GET",
      url: "/v1/webhooks",
      summary:
        "Whether webhook deliveries are stopped (the receiver answered 410 Gone), and since when",
      auth: true,
      permission: "read",
    },
    async () => {
      const stop = await webhooks.stopped();
      return { stopped: stop !== undefined, ...(stop && { goneAt: stop.goneAt }) };
    },
  );

  router.add(
    {
      method: "GET",
      url: "/v1/webhooks/failed",
      summary: "Webhook deliveries that gave up, newest first, of one of the caller's accounts",
      auth: true,
      permission: "read",
      query: AccountListQuery,
    },
    async ({ caller, query }) => {
      const account = accountOf(caller, query.account);
      return {
        account,
        failed: await webhooks.failed(query.limit ?? 100, new Set([account])),
      };
    },
  );

  router.add(
    {
      method: "POST",
      url: "/v1/webhooks/failed/:eventId/redeliver",
      summary: "Send a delivery that gave up again, with a new schedule of attempts",
      auth: true,
      permission: "operate",
      params: WebhookEventParams,
      audit: "webhook_redeliver",
    },
    async ({ caller, params, reply, audit }) => {
      audit({ eventId: params.eventId });
      const outcome = await webhooks.redeliver(params.eventId, new Set(caller.accounts));
      if (outcome === "not_found") throw notFound(`failed webhook delivery ${params.eventId}`);
      if (outcome === "not_failed")
        throw new ApiError(
          "not_failed",
          `webhook delivery ${params.eventId} has not failed: it was delivered or is still being tried`,
        );
      const stop = await webhooks.stopped();
      return reply.code(202).send({
        eventId: params.eventId,
        redelivered: true,
        ...(stop && { heldUntilResumed: true }),
      });
    },
  );

  router.add(
    {
      method: "POST",
      url: "/v1/webhooks/resume",
      summary: "Resume deliveries stopped by a 410 Gone (needs a token of every account)",
      auth: true,
      permission: "operate",
      audit: "webhook_resume",
    },
    async ({ caller, audit }) => {
      audit({});
      requireEveryAccount(caller, [...queues.keys()]);
      await webhooks.resume();
      return { stopped: false };
    },
  );
}

function requireEveryAccount(caller: Caller, accounts: readonly string[]): void {
  const missing = accounts.filter((a) => !caller.accounts.includes(a));
  if (missing.length > 0)
    throw new ApiError(
      "forbidden",
      `the webhook endpoint carries every account's results: resuming it needs a token of every account (this one lacks ${missing.join(", ")})`,
    );
}
