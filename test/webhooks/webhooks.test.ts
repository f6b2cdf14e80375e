import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/load-config.js";
import { createLogger } from "../../src/logger.js";
import { BlockedAddressError, isBlockedAddress } from "../../src/net/address-guard.js";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { EventEnvelope } from "../../src/results/event-envelope.js";
import { JobResult } from "../../src/results/job-result.js";
import { startWorkers } from "../../src/service/start-workers.js";
import { signWebhook } from "../../src/webhooks/moneyq-signature.js";
import { verifyWebhook } from "../../src/webhooks/verify-webhook.js";
import { payoutBatch } from "../fixtures/batches.js";
import { usePipeline } from "../helpers/pipeline.js";
import { waitFor, waitUntil } from "../helpers/wait-until.js";

const SECRET = `whsec_${Buffer.alloc(24, 9).toString("base64")}`;
interface Received {
  readonly eventId: string;
  readonly signature: string;
  readonly body: string;
}
const received: Received[] = [];
const refusals = new Map<string, number>();
let receiver: Server;
let receiverUrl = "";

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    req.on("end", () => {
      const eventId = String(req.headers["moneyq-event-id"]);
      // Refuse each event's first delivery, so every result needs a retry (5 s later).
      const refused = refusals.get(eventId) ?? 0;
      if (refused < 1) {
        refusals.set(eventId, refused + 1);
        res.writeHead(503).end();
        return;
      }
      received.push({ eventId, signature: String(req.headers["moneyq-signature"]), body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/moneyq`;
});
afterAll(() => new Promise<void>((r) => receiver.close(() => r())));

const p = usePipeline({}, { startWorkers: false });

describe("signed webhooks", () => {
  it("deliver every result once, signed, retrying with backoff through their own queue", async () => {
    const config = loadConfig({
      ...p.env(),
      MONEYQ_WEBHOOK_URL: receiverUrl,
      MONEYQ_WEBHOOK_SECRET: SECRET,
      MONEYQ_WEBHOOK_ALLOW_PRIVATE: "127.0.0.0/8",
    });
    const workers = await startWorkers({
      config,
      connection: p.connection(),
      logger: createLogger("silent"),
      registry: new Registry(),
    });
    try {
      await p.producer().enqueueMany(payoutBatch("hooks", 5) as JobInput[]);
      const results = await p.waitForResults(5);
      await waitUntil(
        () => received.length >= 5,
        30_000,
        () => `5 webhooks, ${received.length} arrived`,
        50,
      );
      expect(new Set(received.map((r) => r.eventId)).size).toBe(5);
      for (const delivery of received) {
        expect(verifyWebhook(SECRET, delivery.signature, delivery.body)).toBe(true);
        const event = EventEnvelope.parse(JSON.parse(delivery.body));
        const result = JobResult.parse(event.data);
        expect(event.type).toBe(`job.${result.result}`);
        expect(event.timestamp).toBe(result.finishedAt);
        expect(delivery.eventId).toBe(event.id);
        expect(results).toContainEqual(result);
      }
      expect([...refusals.values()]).toEqual([1, 1, 1, 1, 1]);
      // Counted once the worker has read the receiver's answer, a little after it arrived.
      const counted = (outcome: string) => async () =>
        (await workers.metrics.webhookDeliveries.get()).values.find(
          (v) => v.labels.outcome === outcome,
        )?.value;
      await waitFor(counted("delivered"), (n) => n === 5, 5_000, "5 deliveries counted");
      expect(await counted("retry")()).toBe(5);
    } finally {
      await workers.close();
    }
  });

  it("refuse loopback, link-local and private addresses unless explicitly allowed", async () => {
    // The configuration refuses a blocked literal address before anything starts.
    const unallowed = {
      ...p.env(),
      MONEYQ_WEBHOOK_URL: receiverUrl,
      MONEYQ_WEBHOOK_SECRET: SECRET,
    };
    expect(() => loadConfig(unallowed)).toThrow(ConfigError);
    // The webhooks refuse it too, given a configuration built by other means than loadConfig.
    const allowed = loadConfig({ ...unallowed, MONEYQ_WEBHOOK_ALLOW_PRIVATE: "127.0.0.0/8" });
    const webhook = Object.create(allowed.webhook as object, { allowedRanges: { value: [] } });
    const config = { ...allowed, webhook };
    await expect(
      startWorkers({
        config,
        connection: p.connection(),
        logger: createLogger("silent"),
        registry: new Registry(),
      }),
    ).rejects.toBeInstanceOf(BlockedAddressError);

    // A name, checked when the connection is made: localhost resolves to loopback.
    const byName = loadConfig({
      ...p.env(),
      MONEYQ_WEBHOOK_URL: "http://localhost:9/hook",
      MONEYQ_WEBHOOK_SECRET: SECRET,
    });
    const workers = await startWorkers({
      config: byName,
      connection: p.connection(),
      logger: createLogger("silent"),
      registry: new Registry(),
    });
    try {
      const before = (await p.results()).length;
      await p.producer().enqueue(payoutBatch("blocked", 1)[0] as JobInput);
      await p.waitForResults(before + 1);
      const blocked = async () =>
        (await workers.metrics.webhookDeliveries.get()).values.find(
          (v) => v.labels.outcome === "blocked",
        )?.value ?? 0;
      await waitUntil(
        async () => (await blocked()) >= 1,
        10_000,
        "the delivery to localhost to be blocked",
        50,
      );
    } finally {
      await workers.close();
    }
  });
});

describe("address guard and signatures", () => {
  const addresses: [string, boolean][] = [
    ["127.0.0.1", true],
    ["127.8.9.10", true],
    ["10.1.2.3", true],
    ["172.16.0.1", true],
    ["172.31.255.255", true],
    ["172.32.0.1", false],
    ["192.168.1.1", true],
    ["169.254.169.254", true],
    ["100.64.0.1", true],
    ["0.0.0.0", true],
    ["::1", true],
    ["fe80::1", true],
    ["fd00::1", true],
    ["::ffff:127.0.0.1", true],
    ["::ffff:7f00:1", true],
    ["::ffff:8.8.8.8", false],
    ["8.8.8.8", false],
    ["2001:4860:4860::8888", false],
    ["example.com", true], // not an address: refused (a URL's name is judged where it resolves)
  ];
  it.each(addresses)("%s blocked: %s", (address, blocked) => {
    expect(isBlockedAddress(address)).toBe(blocked);
  });

  it("verify only an untouched, fresh body signed with the secret", () => {
    const body = '{"jobId":"j_1"}';
    const now = 1_800_000_000;
    const header = signWebhook(SECRET, body, now);
    expect(header).toMatch(/^t=1800000000,v1=[0-9a-f]{64}$/);
    expect(verifyWebhook(SECRET, header, body, now)).toBe(true);
    expect(verifyWebhook(SECRET, header, body.replace("1", "2"), now)).toBe(false);
    expect(verifyWebhook("another_secret_value", header, body, now)).toBe(false);
    expect(verifyWebhook(SECRET, header, body, now + 301)).toBe(false);
    expect(verifyWebhook(SECRET, undefined, body, now)).toBe(false);
    expect(verifyWebhook(SECRET, "t=abc,v1=00", body, now)).toBe(false);
  });
});
