import type { Registry } from "prom-client";
import { PaymentsClient } from "../client/payments-client.js";
import type { AccountConfig, Config } from "../config/load-config.js";
import type { Logger } from "../logger.js";
import { countErrors } from "../metrics/error-metrics.js";
import { MetricAccounts } from "../metrics/metric-accounts.js";
import { createPipelineMetrics, type PipelineMetrics } from "../metrics/pipeline-metrics.js";
import { LaneHolds } from "../outflow/lane-holds.js";
import { LockedWrites } from "../processors/locked-writes.js";
import { RateGate } from "../processors/rate-gate.js";
import type { WorkerParts } from "../processors/worker-parts.js";
import type { ProviderAdapter } from "../provider/adapter.js";
import { AccountPauses } from "../queues/account-pauses.js";
import { AccountQueues } from "../queues/account-queues.js";
import { WorkHolds } from "../queues/work-holds.js";
import { closeRedis } from "../redis/close.js";
import { duplicateConnection, type RedisConnection } from "../redis/connection.js";
import { watchRedisErrors } from "../redis/errors.js";
import { RepeatedErrors } from "../redis/repeated-errors.js";
import type { JobResult } from "../results/job-result.js";
import { ResultsStore } from "../results/results-store.js";
import { Reversals } from "../results/reversals.js";
import { type JobTracer, NO_TRACING } from "../tracing/job-tracer.js";
import type { WebhookDeliveries } from "../webhooks/webhook-deliveries.js";
import { type RunningWebhooks, startWebhooks } from "../webhooks/webhook-delivery.js";
import { openSweeper } from "./open-sweeper.js";

export interface StartWorkersOptions {
  readonly config: Config;
  /** Upstream base URL; defaults to config.paymentsApiUrl (the composition root sets the embedded sandbox's). */
  readonly paymentsApiUrl?: string;
  /** Accounts to work for; defaults to config.accounts. */
  readonly accounts?: readonly AccountConfig[];
  /** For queues, gate and results. Workers open their own blocking connections from it. The caller closes it. */
  readonly connection: RedisConnection;
  readonly logger: Logger;
  readonly registry: Registry;
  /** What the workers record; default: the pipeline's metrics defined on `registry`. */
  readonly metrics?: PipelineMetrics;
  readonly onResult?: (result: JobResult) => Promise<void>;
  /** The process's account queues, closed by their owner; else the workers open and close their own. */
  readonly queues?: AccountQueues;
  /** The process's webhook delivery queue, closed by its owner; else the webhooks open their own. */
  readonly webhookDeliveries?: WebhookDeliveries;
  /** Each job's spans and BullMQ's (src/tracing); NO_TRACING when left out. */
  readonly tracer?: JobTracer;
  /** The loaded MONEYQ_PROVIDER_ADAPTER; the profile alone reads answers when left out. */
  readonly adapter?: ProviderAdapter | undefined;
  /**
   * The process's log of repeated errors (a run logged once per interval, each counted in
   * `moneyq_errors_total`); the workers make and close their own when left out.
   */
  readonly errors?: RepeatedErrors;
}

/** The workers' parts, with the webhooks of their results; `close()` closes what was built here. */
export interface OpenWorkerParts extends WorkerParts {
  /** Relaying and delivering the results' webhooks, when a webhook URL is configured. */
  readonly webhooks: RunningWebhooks | undefined;
  /** Closes every part built here (not those the options lent). Idempotent; every step runs. */
  close(): Promise<void>;
}

/**
 * Builds what the workers run on (processors/worker-parts.ts): the accounts' clients, the
 * results store on a connection of its own, the rate gate and the other Redis parts, and starts
 * the webhooks before any worker runs, so the relay's consumer group exists before the first
 * result.
 */
export async function openWorkerParts(options: StartWorkersOptions): Promise<OpenWorkerParts> {
  const { config, connection, logger } = options;
  const baseUrl = options.paymentsApiUrl ?? config.paymentsApiUrl;
  if (!baseUrl)
    throw new Error(
      "startWorkers: no Payments API URL (set PAYMENTS_API_URL or run the embedded sandbox)",
    );
  const accounts = options.accounts ?? config.accounts;
  const tracer = options.tracer ?? NO_TRACING;
  // First, as it opens nothing: a base URL or key a client refuses leaves nothing to close.
  const clients = createClients(config, baseUrl, accounts, options.adapter);
  const queues = options.queues ?? openQueues(options, accounts, tracer);
  const metrics = options.metrics ?? pipelineMetricsOf(options, accounts);
  const errors =
    options.errors ?? new RepeatedErrors(logger, { count: countErrors(options.registry) });
  const { resultsConnection, results } = openResults(config, connection, logger);
  const sweeper =
    config.books.reconcileEveryMs === undefined
      ? undefined
      : openSweeper(config, resultsConnection, baseUrl, options.adapter);
  const parts: WorkerParts = {
    ...{ config, baseUrl, accounts, connection, resultsConnection, logger, tracer },
    ...{ registry: options.registry, clients, queues, metrics, errors, results, sweeper },
    pauses: new AccountPauses(connection, config.redisPrefix, queues.byAccount),
    reversals: new Reversals(resultsConnection, {
      prefix: config.redisPrefix,
      retentionMs: config.pipeline.retentionMs,
      maxLen: config.pipeline.resultsMaxLen,
    }),
    gate: new RateGate(connection, config.redisPrefix, config.pipeline.rateWindowMarginMs),
    writes: new LockedWrites(connection),
    holds: new WorkHolds(connection, results),
    laneHolds: new LaneHolds(connection, results.keyspace),
    onResult: options.onResult,
  };
  const own = {
    queues: options.queues ? undefined : queues,
    errors: options.errors ? undefined : errors,
  };
  let webhooks: RunningWebhooks | undefined;
  try {
    webhooks = await startWebhooksOf(options, parts);
  } catch (error) {
    // Nothing runs yet: what was built here is closed before the refusal goes up.
    await closeParts(parts, undefined, own);
    throw error;
  }
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= closeParts(parts, webhooks, own);
    return closing;
  };
  return { ...parts, webhooks, close };
}

/** The accounts' queues, when the process lends none. */
function openQueues(
  options: StartWorkersOptions,
  accounts: readonly AccountConfig[],
  tracer: JobTracer,
): AccountQueues {
  const aliases = accounts.map((a) => a.alias);
  return new AccountQueues(
    options.connection,
    options.config.redisPrefix,
    aliases,
    tracer.telemetry,
  );
}

/**
 * The results store, on a connection of its own, so a large emission never holds up the rate
 * gate's replies on the shared one. No auto-pipelining: the store gathers concurrent results
 * into one call itself, and auto-pipelining would only hold each call back a turn.
 */
function openResults(config: Config, connection: RedisConnection, logger: Logger) {
  const resultsConnection = watchRedisErrors(duplicateConnection(connection), logger, "results");
  const results = new ResultsStore(resultsConnection, {
    prefix: config.redisPrefix,
    retentionMs: config.pipeline.retentionMs,
    maxLen: config.pipeline.resultsMaxLen,
    recheckAfterMs: config.books.recheckAfterMs,
  });
  return { resultsConnection, results };
}

/** The pipeline's metrics, with series of their own for the accounts config names. */
function pipelineMetricsOf(
  options: StartWorkersOptions,
  accounts: readonly AccountConfig[],
): PipelineMetrics {
  const aliases = accounts.map((a) => a.alias);
  const named = new MetricAccounts(aliases, options.config.metrics.accounts);
  return createPipelineMetrics(options.registry, named);
}

/**
 * One client, with a connection pool of its own, per account: nothing one account sends or
 * suffers (an unsendable request, a hanging upstream, a jammed pool) can hold up another's.
 */
function createClients(
  config: Config,
  baseUrl: string,
  accounts: readonly AccountConfig[],
  adapter: ProviderAdapter | undefined,
): Map<string, PaymentsClient> {
  return new Map(
    accounts.map((a) => [
      a.alias,
      new PaymentsClient({
        baseUrl,
        apiKey: a.apiKey,
        connections: a.concurrency,
        connectTimeoutMs: config.http.connectTimeoutMs,
        requestTimeoutMs: config.http.requestTimeoutMs,
        profile: config.provider,
        adapter,
      }),
    ]),
  );
}

/** The webhooks of the accounts' results, when a webhook URL is configured. */
async function startWebhooksOf(
  options: StartWorkersOptions,
  parts: WorkerParts,
): Promise<RunningWebhooks | undefined> {
  const { config } = parts;
  if (!config.webhook) return undefined;
  return startWebhooks({
    connection: parts.connection,
    prefix: config.redisPrefix,
    streams: parts.results.streamKeys(parts.accounts.map((a) => a.alias)),
    webhook: config.webhook,
    retentionMs: config.pipeline.retentionMs,
    logger: parts.logger,
    errors: parts.errors,
    metrics: parts.metrics,
    telemetry: parts.tracer.telemetry,
    ...(options.webhookDeliveries && { deliveries: options.webhookDeliveries }),
  });
}

/**
 * Closes the parts built here: the webhooks (within the grace period: a slow receiver must not
 * hold the shutdown past its bound), the sweeper, the clients, the results' connection, and the
 * queues and error log when they were not lent.
 */
async function closeParts(
  parts: WorkerParts,
  webhooks: RunningWebhooks | undefined,
  own: { readonly queues: AccountQueues | undefined; readonly errors: RepeatedErrors | undefined },
): Promise<void> {
  await webhooks?.close(parts.config.pipeline.shutdownGraceMs).catch(() => undefined);
  await parts.sweeper?.close().catch(() => undefined);
  await own.queues?.close().catch(() => undefined);
  await Promise.allSettled([...parts.clients.values()].map((c) => c.close()));
  await closeRedis(parts.resultsConnection).catch(() => undefined);
  own.errors?.close();
}
