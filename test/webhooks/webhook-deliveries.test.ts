import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WebhookConfig } from "../../src/config/load-config.js";
import { createLogger } from "../../src/logger.js";
import { keyspace, resultsStreamKey } from "../../src/redis/keys.js";
import { standardHeaders } from "../../src/webhooks/standard-signature.js";
import { verifyWebhook } from "../../src/webhooks/verify-webhook.js";
import { deliveryJobId, WebhookDeliveries } from "../../src/webhooks/webhook-deliveries.js";
import {
  type RunningWebhooks,
  startWebhooks,
  type WebhookOutcome,
} from "../../src/webhooks/webhook-delivery.js";
import { useTestRedis } from "../helpers/redis.js";
import {
  type RecordedRequest,
  type Reply,
  type ScriptedServer,
  startScriptedServer,
} from "../helpers/scripted-server.js";
import { waitUntil } from "../helpers/wait-until.js";

/** A Standard Webhooks secret, and a plain one of an earlier configuration, both active. */
const NEW_SECRET = `whsec_${Buffer.alloc(24, 5).toString("base64")}`;
const OLD_SECRET = "an_older_plain_secret_0123456789";

let receiver: ScriptedServer;
let origin = "";
beforeAll(async () => {
  receiver = await startScriptedServer();
  receiver.reply({ status: 204 });
  origin = new URL(receiver.baseUrl).origin;
});
afterAll(() => receiver.close());

const idOf = (r: RecordedRequest) => String(r.headers["webhook-id"]);
const of = (eventId: string) => receiver.requests.filter((r) => idOf(r) === eventId);
/** Answers each delivery by how many of its event came before. */
const byEarlier = (answer: (r: RecordedRequest, earlier: number) => Reply) =>
  receiver.reply((r, before) => answer(r, before.filter((b) => idOf(b) === idOf(r)).length));

const redis = useTestRedis("webhook-deliveries");
const connection = redis.connect();
const streamKey = resultsStreamKey(keyspace(redis.prefix), "any");
const counted = new Map<WebhookOutcome, number>();
const metrics = {
  webhookDeliveries: {
    inc: ({ outcome }: { outcome: WebhookOutcome }) =>
      counted.set(outcome, (counted.get(outcome) ?? 0) + 1),
  },
};

function webhookAt(path: string): WebhookConfig {
  return {
    url: `${origin}${path}`,
    secrets: [NEW_SECRET, OLD_SECRET],
    allowedRanges: ["127.0.0.0/8"],
  };
}

async function start(path: string, retryScheduleMs: readonly number[]): Promise<RunningWebhooks> {
  return startWebhooks({
    connection,
    streams: [streamKey],
    logger: createLogger("silent"),
    prefix: redis.prefix,
    webhook: webhookAt(path),
    retentionMs: 600_000,
    metrics,
    retryScheduleMs,
    random: () => 0.5,
  });
}

/** A result on the stream, as the pipeline writes it; its entry id is the event id. */
async function emit(jobId: string): Promise<{ eventId: string; body: string }> {
  const body = JSON.stringify({ jobId, account: "alpha", result: "succeeded" });
  return { eventId: (await connection.xadd(streamKey, "*", "result", body)) as string, body };
}

const deliveries = new WebhookDeliveries(connection, redis.prefix);
afterAll(() => deliveries.close());

describe("webhook deliveries", () => {
  it("carry the Standard Webhooks headers, signed with every active secret", async () => {
    const webhooks = await start("/standard", [100]);
    try {
      const sent = await emit("j_standard");
      await waitUntil(() => of(sent.eventId).length === 1, 10_000, "the delivery", 20);
      const { headers, body } = of(sent.eventId)[0] as RecordedRequest;
      const received = {
        "webhook-id": String(headers["webhook-id"]),
        "webhook-timestamp": String(headers["webhook-timestamp"]),
        "webhook-signature": String(headers["webhook-signature"]),
      };
      expect(body).toBe(sent.body);
      expect(received["webhook-signature"].split(" ")).toHaveLength(2);
      // The reference implementation accepts it under either secret: the rotation works.
      expect(new Webhook(NEW_SECRET).verify(body, received)).toEqual(JSON.parse(sent.body));
      const oldAsStandard = `whsec_${Buffer.from(OLD_SECRET).toString("base64")}`;
      expect(new Webhook(oldAsStandard).verify(body, received)).toEqual(JSON.parse(sent.body));
      expect(verifyWebhook(NEW_SECRET, headers, body)).toBe(true);
      expect(verifyWebhook(OLD_SECRET, headers, body)).toBe(true);
      const stranger = `whsec_${Buffer.alloc(24, 6).toString("base64")}`;
      expect(() => new Webhook(stranger).verify(body, received)).toThrow();
      expect(verifyWebhook(stranger, headers, body)).toBe(false);
      // The id is signed: a captured delivery replayed under a new id is refused.
      const renamed = { ...received, "webhook-id": `${sent.eventId}9` };
      expect(() => new Webhook(NEW_SECRET).verify(body, renamed)).toThrow();
      expect(verifyWebhook(NEW_SECRET, renamed, body)).toBe(false);
      const tampered = `${body.slice(0, -1)}, "amount": 1}`;
      expect(() => new Webhook(NEW_SECRET).verify(tampered, received)).toThrow();
      // An old delivery, genuinely signed, is refused for its age.
      const old = Math.floor(Date.now() / 1000) - 600;
      const stale = standardHeaders([NEW_SECRET], sent.eventId, body, old);
      expect(() => new Webhook(NEW_SECRET).verify(body, stale)).toThrow(/too old/);
      expect(verifyWebhook(NEW_SECRET, stale, body)).toBe(false);
      expect(verifyWebhook(NEW_SECRET, stale, body, { now: old + 10 })).toBe(true);
      // The earlier header, for receivers that have not moved yet, under either secret's text.
      const legacy = String(headers["moneyq-signature"]);
      expect(verifyWebhook(OLD_SECRET, legacy, body)).toBe(true);
      expect(verifyWebhook(NEW_SECRET, legacy, body)).toBe(true);
      expect(headers["moneyq-event-id"]).toBe(sent.eventId);
    } finally {
      await webhooks.close();
    }
  });

  it("retry on the schedule, give up, are listed, and are sent again on request", async () => {
    let accepting = false;
    byEarlier(() => ({ status: accepting ? 204 : 500 }));
    const webhooks = await start("/flaky", [300, 600]);
    try {
      const sent = await emit("j_flaky");
      await waitUntil(
        async () => (await deliveries.failed(10)).some((d) => d.eventId === sent.eventId),
        15_000,
        "the delivery to give up",
        20,
      );
      const tries = of(sent.eventId).map((a) => a.at);
      expect(tries).toHaveLength(3);
      expect((tries[1] as number) - (tries[0] as number)).toBeGreaterThanOrEqual(295);
      expect((tries[2] as number) - (tries[1] as number)).toBeGreaterThanOrEqual(595);
      const [failed] = await deliveries.failed(10, new Set(["alpha"]));
      expect(failed).toMatchObject({
        eventId: sent.eventId,
        account: "alpha",
        jobId: "j_flaky",
        attempts: 3,
        reason: "webhook receiver answered HTTP 500",
      });
      expect(await deliveries.failed(10, new Set(["beta"]))).toEqual([]);
      expect(await deliveries.redeliver(sent.eventId, new Set(["beta"]))).toBe("not_found");
      accepting = true;
      expect(await deliveries.redeliver(sent.eventId)).toBe("redelivered");
      await waitUntil(() => of(sent.eventId).length === 4, 10_000, "the redelivery", 20);
      await waitUntil(
        async () =>
          (await deliveries.queue.getJobState(deliveryJobId(sent.eventId))) === "completed",
        5_000,
        "the redelivery to complete",
        20,
      );
      expect(await deliveries.failed(10)).toEqual([]);
      expect(await deliveries.redeliver(sent.eventId)).toBe("not_failed");
      expect(await deliveries.redeliver("1-0")).toBe("not_found");
    } finally {
      await webhooks.close();
      receiver.reply({ status: 204 });
    }
  });

  it("wait as long as a 429's or a 503's Retry-After asks, not the shorter schedule", async () => {
    byEarlier((_, earlier) =>
      earlier === 0 ? { status: 429, headers: { "retry-after": "1" } } : { status: 204 },
    );
    const webhooks = await start("/busy", [50, 50]);
    try {
      const first = await emit("j_busy_429");
      await waitUntil(() => of(first.eventId).length === 2, 10_000, "the retry after 429", 20);
      byEarlier((_, earlier) =>
        earlier === 0 ? { status: 503, headers: { "retry-after": "1" } } : { status: 204 },
      );
      const second = await emit("j_busy_503");
      await waitUntil(() => of(second.eventId).length === 2, 10_000, "the retry after 503", 20);
      for (const sent of [first, second]) {
        const [a, b] = of(sent.eventId).map((x) => x.at) as [number, number];
        expect(b - a, sent.body).toBeGreaterThanOrEqual(995);
      }
    } finally {
      await webhooks.close();
      receiver.reply({ status: 204 });
    }
  });

  it("stop at a 410 Gone, keep every event, and go on when resumed or moved", async () => {
    receiver.reply((r) => ({ status: r.url === "/gone" ? 410 : 204 }));
    const gone = counted.get("gone") ?? 0;
    const webhooks = await start("/gone", [100]);
    try {
      const refused = await emit("j_gone_1");
      await waitUntil(
        async () => (await deliveries.stopped()) !== undefined,
        10_000,
        "the stop",
        20,
      );
      expect(counted.get("gone")).toBe(gone + 1);
      expect(await deliveries.queue.isPaused()).toBe(true);
      const held = await emit("j_gone_2");
      await waitUntil(
        async () =>
          ["waiting", "paused"].includes(
            await deliveries.queue.getJobState(deliveryJobId(held.eventId)),
          ),
        10_000,
        "the held event to be queued",
        20,
      );
      expect(of(held.eventId)).toEqual([]);
      expect(of(refused.eventId)).toHaveLength(1);
      const [failed] = await deliveries.failed(10);
      expect(failed).toMatchObject({ eventId: refused.eventId, attempts: 1 });
      expect(failed?.reason).toContain("410");

      receiver.reply({ status: 204 });
      await deliveries.resume();
      expect(await deliveries.stopped()).toBeUndefined();
      await waitUntil(() => of(held.eventId).length === 1, 10_000, "the held event", 20);
      expect(await deliveries.redeliver(refused.eventId)).toBe("redelivered");
      await waitUntil(() => of(refused.eventId).length === 2, 10_000, "the redelivery", 20);
    } finally {
      await webhooks.close();
    }
    // Stopped for one URL, a start with another resumes; with the same URL it stays stopped.
    await deliveries.stop(webhookAt("/gone").url);
    const same = await start("/gone", [100]);
    await same.close();
    expect(await deliveries.stopped()).toBeDefined();
    const moved = await start("/moved", [100]);
    await moved.close();
    expect(await deliveries.stopped()).toBeUndefined();
    expect(await deliveries.queue.isPaused()).toBe(false);
  });

  it("are paused only while a stop is recorded, also when a stop and a resume run at once", async () => {
    const url = webhookAt("/gone").url;
    const agree = async () =>
      ({
        paused: await deliveries.queue.isPaused(),
        stopped: (await deliveries.stopped()) !== undefined,
      }) as const;
    const seen: { paused: boolean; stopped: boolean }[] = [];
    for (let i = 0; i < 5; i += 1) {
      await Promise.all([deliveries.stop(url), deliveries.resume()]);
      seen.push(await agree());
      await Promise.all([deliveries.resume(), deliveries.stop(url)]);
      seen.push(await agree());
    }
    await deliveries.resume();
    expect(seen.filter((s) => s.paused !== s.stopped)).toEqual([]);
  });
});
