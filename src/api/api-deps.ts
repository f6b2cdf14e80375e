import type { Queue } from "bullmq";
import type { FastifyPluginCallback } from "fastify";
import type { Registry } from "prom-client";
import type { Batches } from "../batches/batches.js";
import type { ApiToken } from "../config/load-config.js";
import type { Logger } from "../logger.js";
import type { LaneHolds } from "../outflow/lane-holds.js";
import type { ProviderLookups } from "../processors/provider-lookup.js";
import type { AccountPauses } from "../queues/account-pauses.js";
import type { DeadLetters } from "../queues/dead-letters.js";
import type { JobControls } from "../queues/job-controls.js";
import type { JobData } from "../queues/job-data.js";
import type { JobResolutions } from "../queues/job-resolutions.js";
import type { Producer } from "../queues/producer.js";
import type { RedisTroubleCode } from "../redis/refusals.js";
import type { RepeatedErrors } from "../redis/repeated-errors.js";
import type { ResultsStore } from "../results/results-store.js";
import type { WebhookDeliveries } from "../webhooks/webhook-deliveries.js";

/** What /readyz reports. */
export interface Readiness {
  /** Redis took a write (readiness writes a short-lived key, at most once a second). */
  readonly redis: boolean;
  /** Why it did not, when it did not. */
  readonly redisProblem?: RedisTroubleCode | undefined;
  /** Undefined in an API-only process, which runs no workers. */
  readonly workers: boolean | undefined;
  readonly shuttingDown: boolean;
}

/** Everything the HTTP API acts through; the service composes them. */
export interface ApiDeps {
  readonly tokens: readonly ApiToken[];
  readonly producer: Producer;
  readonly batches: Batches;
  readonly results: ResultsStore;
  /** One queue per configured account alias. */
  readonly queues: ReadonlyMap<string, Queue<JobData>>;
  readonly pauses: AccountPauses;
  readonly deadLetters: DeadLetters;
  /** The webhook delivery queue: its stop after a 410, deliveries that gave up, redelivery. */
  readonly webhooks: WebhookDeliveries;
  /** Cancel, approve and reject a job enqueued alone. */
  readonly jobs: JobControls;
  /** Resolve by hand a job left to reconciliation (or failed), with a second person's approval. */
  readonly resolutions: JobResolutions;
  /** Currency lanes held by a velocity limit or insufficient funds (docs/safety.md). */
  readonly laneHolds: LaneHolds;
  /**
   * Lookups at the provider before a dead letter that may have reached it is replayed; without
   * them (no provider to ask), a replay sends as asked.
   */
  readonly lookups?: ProviderLookups | undefined;
  readonly registry: Registry;
  readonly logger: Logger;
  /** Where a run of the same error is logged once per interval; else every error is logged. */
  readonly errors?: RepeatedErrors | undefined;
  /** Largest batch upload; every other route takes at most JOB_BODY_LIMIT_BYTES. */
  readonly bodyLimitBytes: number;
  /** Request, header and idle timeouts (config.api); defaults when left out. */
  readonly timeouts?: {
    readonly requestMs: number;
    readonly headersMs: number;
    readonly idleMs: number;
  };
  readiness(): Promise<Readiness>;
  /**
   * The state of the connection to Redis (ioredis's `status`): a request that needs Redis while
   * it is not `ready` is answered 503 at once, instead of waiting for a reconnect. Left out: the
   * request goes on.
   */
  readonly redisStatus?: () => string;
  /** A span per request (@fastify/otel), when tracing is on. */
  readonly tracingPlugin?: FastifyPluginCallback | undefined;
}
