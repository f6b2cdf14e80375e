import { Batches } from "../batches/batches.js";
import {
  type AccountConfig,
  account,
  type Config,
  DEFAULT_ACCOUNT_ALIAS,
  embeddedUpstream,
} from "../config/load-config.js";
import { LaneHolds } from "../outflow/lane-holds.js";
import type { BalanceSource } from "../provider/read-balances.js";
import { AccountPauses } from "../queues/account-pauses.js";
import { AccountQueues } from "../queues/account-queues.js";
import { DeadLetters } from "../queues/dead-letters.js";
import { JobControls } from "../queues/job-controls.js";
import { JobResolutions } from "../queues/job-resolutions.js";
import { Producer } from "../queues/producer.js";
import type { RedisConnection } from "../redis/connection.js";
import { Resolutions } from "../results/resolutions.js";
import { ResultsStore } from "../results/results-store.js";
import { DEMO_API_KEY } from "../sandbox/options.js";
import { type JobTracer, NO_TRACING } from "../tracing/job-tracer.js";
import { WebhookDeliveries } from "../webhooks/webhook-deliveries.js";

/**
 * What a service and the operator commands act through, over one Redis connection: the
 * accounts' queues (opened once, shared by everything here), the producer, the results, the
 * batches, the dead letters, the pauses and the webhook deliveries.
 */
export interface SharedParts {
  readonly config: Config;
  /** The caller's; `close()` leaves it open. */
  readonly connection: RedisConnection;
  /** Aliases of the accounts served. */
  readonly accounts: readonly string[];
  readonly queues: AccountQueues;
  readonly producer: Producer;
  readonly results: ResultsStore;
  readonly batches: Batches;
  readonly deadLetters: DeadLetters;
  readonly pauses: AccountPauses;
  /** The webhook delivery queue: the endpoint's stop, deliveries that gave up, redelivery. */
  readonly webhooks: WebhookDeliveries;
  /** Cancel, approve and reject a job enqueued alone. */
  readonly jobs: JobControls;
  /** Resolutions of jobs by hand, and their approval by a second person. */
  readonly resolutions: JobResolutions;
  readonly laneHolds: LaneHolds;
  /** Closes the producer and the queues (not the connection). Every step runs. */
  close(): Promise<void>;
}

/** The configured accounts; the embedded sandbox's demo account when there is no upstream. */
export function serviceAccounts(config: Config): readonly AccountConfig[] {
  if (!embeddedUpstream(config)) return config.accounts;
  const { ratePerSecond, concurrency } = config.accountDefaults;
  return [account(DEFAULT_ACCOUNT_ALIAS, DEMO_API_KEY, ratePerSecond, concurrency)];
}

/** Opens the shared parts of the configured accounts on `connection`, traced by `tracer`. */
export function openParts(
  config: Config,
  connection: RedisConnection,
  tracer: JobTracer = NO_TRACING,
  balances?: BalanceSource,
): SharedParts {
  const prefix = config.redisPrefix;
  const accounts = serviceAccounts(config).map((a) => a.alias);
  const queues = new AccountQueues(connection, prefix, accounts, tracer.telemetry);
  const producer = new Producer({
    connection,
    prefix,
    accounts,
    maxAttempts: config.pipeline.maxAttempts,
    retentionMs: config.pipeline.retentionMs,
    profile: config.provider,
    queues,
    approvals: config.approvals,
    paymentRepeats: config.paymentRepeats,
    tracer,
  });
  const results = new ResultsStore(connection, {
    prefix,
    retentionMs: config.pipeline.retentionMs,
    maxLen: config.pipeline.resultsMaxLen,
    recheckAfterMs: config.books.recheckAfterMs,
  });
  const webhooks = new WebhookDeliveries(connection, prefix, tracer.telemetry);
  const stores = {
    prefix,
    retentionMs: config.pipeline.retentionMs,
    maxLen: config.pipeline.resultsMaxLen,
  };
  return {
    config,
    connection,
    accounts,
    queues,
    producer,
    results,
    batches: new Batches({
      ...{ connection, prefix, producer, results },
      ...{ approvals: config.approvals, balances },
    }),
    deadLetters: new DeadLetters(connection, prefix, results, queues),
    pauses: new AccountPauses(connection, prefix, queues.byAccount),
    webhooks,
    jobs: new JobControls({
      connection,
      prefix,
      producer,
      results,
      retentionMs: config.pipeline.retentionMs,
    }),
    laneHolds: new LaneHolds(connection, results.keyspace),
    resolutions: new JobResolutions({
      connection,
      prefix,
      results,
      resolutions: new Resolutions(connection, stores),
      approvals: config.approvals,
    }),
    async close() {
      try {
        await producer.close();
      } finally {
        await Promise.allSettled([queues.close(), webhooks.close()]);
      }
    },
  };
}
