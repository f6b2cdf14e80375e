import { Queue } from "bullmq";
import type { ApiApp } from "../../src/api/api-app.js";
import type { ApiDeps } from "../../src/api/api-deps.js";
import { buildApi } from "../../src/api/start-api.js";
import { LaneHolds } from "../../src/outflow/lane-holds.js";
import { AccountPauses } from "../../src/queues/account-pauses.js";
import { DeadLetters } from "../../src/queues/dead-letters.js";
import { JobControls } from "../../src/queues/job-controls.js";
import { JobResolutions } from "../../src/queues/job-resolutions.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import { Resolutions } from "../../src/results/resolutions.js";
import { WebhookDeliveries } from "../../src/webhooks/webhook-deliveries.js";
import type { ServiceHarness } from "./service.js";

/**
 * A second API (not listening) over the parts of a running test service, for a test that needs
 * the route table (`router.routes`) or one part swapped (`parts`). Answers through
 * `router.app.inject`; `close` closes it and what it opened.
 */
export function serviceApi(h: ServiceHarness, parts: Partial<ApiDeps> = {}) {
  const service = h.service();
  const prefix = h.config().redisPrefix;
  const queues = new Map(
    service.accounts.map((a) => [
      a.alias,
      new Queue(accountQueueName(h.space(), a.alias), { connection: h.redis(), prefix }),
    ]),
  );
  const webhooks = new WebhookDeliveries(h.redis(), prefix);
  const router: ApiApp = buildApi({
    tokens: service.tokens,
    producer: service.producer,
    batches: service.batches,
    results: service.results,
    queues,
    pauses: new AccountPauses(h.redis(), prefix, queues),
    deadLetters: new DeadLetters(h.redis(), prefix, service.results),
    webhooks,
    jobs: new JobControls({
      connection: h.redis(),
      prefix,
      producer: service.producer,
      results: service.results,
      retentionMs: 60_000,
    }),
    resolutions: new JobResolutions({
      connection: h.redis(),
      prefix,
      results: service.results,
      resolutions: new Resolutions(h.redis(), { prefix, retentionMs: 60_000, maxLen: 1_000 }),
    }),
    laneHolds: new LaneHolds(h.redis(), service.results.keyspace),
    registry: service.registry,
    logger: service.logger,
    bodyLimitBytes: 1_000_000,
    readiness: async () => ({ redis: true, workers: true, shuttingDown: false }),
    ...parts,
  });
  return {
    router,
    async close() {
      await router.app.close();
      await Promise.all([...queues.values()].map((q) => q.close()));
      await webhooks.close();
    },
  };
}
