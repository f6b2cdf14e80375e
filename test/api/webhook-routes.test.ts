import { describe, expect, it } from "vitest";
import { WebhookDeliveries } from "../../src/webhooks/webhook-deliveries.js";
import { failedDeliveries } from "../helpers/failed-deliveries.js";
import { ALPHA_TOKEN, BETA_TOKEN, BOTH_TOKEN, useService } from "../helpers/service.js";

const h = useService();

describe("the webhook routes", () => {
  it("list and redeliver the caller's failed deliveries only", async () => {
    const [alphaId, betaId] = await failedDeliveries(h.redis(), h.config().redisPrefix, [
      "alpha",
      "beta",
    ]);
    const alpha = await h.api("GET", "/v1/webhooks/failed", { token: ALPHA_TOKEN });
    expect(alpha.status).toBe(200);
    expect(alpha.body).toMatchObject({ account: "alpha", failed: [{ eventId: alphaId }] });
    expect(alpha.body.failed).toHaveLength(1);
    expect(alpha.body.failed[0]).toMatchObject({
      account: "alpha",
      attempts: 1,
      reason: "webhook receiver answered HTTP 500",
    });
    const beta = await h.api("GET", "/v1/webhooks/failed?account=beta", { token: BOTH_TOKEN });
    expect(beta.body.failed.map((d: { eventId: string }) => d.eventId)).toEqual([betaId]);

    const other = await h.api("POST", `/v1/webhooks/failed/${alphaId}/redeliver`, {
      token: BETA_TOKEN,
    });
    expect(other.status).toBe(404);
    const bad = await h.api("POST", "/v1/webhooks/failed/nope/redeliver");
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([
      { field: "params.eventId", rule: "must be a webhook event id (evt_ and 32 hex digits)" },
    ]);
    const sent = await h.api("POST", `/v1/webhooks/failed/${alphaId}/redeliver`);
    expect(sent.status).toBe(202);
    expect(sent.body).toEqual({ eventId: alphaId, redelivered: true });
    const again = await h.api("POST", `/v1/webhooks/failed/${alphaId}/redeliver`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("not_failed");
    expect((await h.api("GET", "/v1/webhooks/failed")).body.failed).toEqual([]);
  });

  it("show a stop after 410 Gone, resumed only by a token of every account", async () => {
    const deliveries = new WebhookDeliveries(h.redis(), h.config().redisPrefix);
    try {
      expect((await h.api("GET", "/v1/webhooks")).body).toEqual({ stopped: false });
      await deliveries.stop("https://hooks.example.test/gone", Date.parse("2026-11-01T10:00:00Z"));
      expect((await h.api("GET", "/v1/webhooks", { token: BETA_TOKEN })).body).toEqual({
        stopped: true,
        goneAt: "2026-11-01T10:00:00.000Z",
      });
      const one = await h.api("POST", "/v1/webhooks/resume", { token: ALPHA_TOKEN });
      expect(one.status).toBe(403);
      expect(one.body.error.message).toContain("this one lacks beta");
      expect(await deliveries.queue.isPaused()).toBe(true);
      const all = await h.api("POST", "/v1/webhooks/resume", { token: BOTH_TOKEN });
      expect(all.status).toBe(200);
      expect((await h.api("GET", "/v1/webhooks")).body).toEqual({ stopped: false });
      expect(await deliveries.queue.isPaused()).toBe(false);
    } finally {
      await deliveries.close();
    }
  });
});
