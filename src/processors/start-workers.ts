import { type Queue, Worker } from "bullmq";
import type { Registry } from "prom-client";
import { PaymentsClient } from "../client/payments-client.js";
import { retryDelayMs } from "../client/retry.js";
import type { AccountConfig, Config } from "../config/load-config.js";
import type { Logger } from "../logger.js";
import { countErrors } from "../metrics/error-metrics.js";
import { MetricAccounts } from "../metrics/metric-accounts.js";
import { createPipelineMetrics, type PipelineMetrics } from "../metrics/pipeline-metrics.js";
import { reportTurns } from "../metrics/turn-metrics.js";
import { LaneHolds } from "../outflow/lane-holds.js";
import type { ProviderAdapter } from "../provider/adapter.js";
import { AccountPauses } from "../queues/account-pauses.js";
import { AccountQueues } from "../queues/account-queues.js";
import type { JobData } from "../queues/job-data.js";
import { accountQueueName } from "../queues/queue-names.js";
import { laneUnlanedJobs } from "../queues/unlaned-jobs.js";
import { WorkHolds } from "../queues/work-holds.js";
import { onReconnected } from "../redis/bullmq-internals.js";
import { closeRedis } from "../redis/close.js";
import { duplicateConnection, type RedisConnection } from "../redis/connection.js";
import { isRedisConnectionError, outageLog, watchRedisErrors } from "../redis/errors.js";
import { type Keyspace, lanePassKey } from "../redis/keys.js";
import { RepeatedErrors } from "../redis/repeated-errors.js";
import type { JobResult } from "../results/job-result.js";
import { ResultsStore } from "../results/results-store.js";
import { Reversals } from "../results/reversals.js";
import { type JobTracer, NO_TRACING } from "../tracing/job-tracer.js";
import type { WebhookDeliveries } from "../webhooks/webhook-deliveries.js";
import { type RunningWebhooks, startWebhooks } from "../webhooks/webhook-delivery.js";
import { AccountTurns } from "./account-turns.js";
import { InProgressBudget } from "./in-progress-budget.js";
import { backToWait } from "./job-moves.js";
import { createJobProcessor } from "./job-processor.js";
import { LaneWakes, listenForWakes } from "./lane-wakes.js";
import { LockedWrites } from "./locked-writes.js";
import { PeriodicSweeps } from "./periodic-sweeps.js";
import type { ProcessorDeps } from "./processor-deps.js";
import { RateGate } from "./rate-gate.js";
import { Rechecks } from "./rechecks.js";
import { openSweeper } from "./sweeper.js";

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

export interface RunningWorkers {
  /** The workers running now: only accounts with work have one (a live view). */
  readonly workers: ReadonlyMap<string, Worker>;
  /** Whether the workers serve: taking turns, and each worker of an account served running. */
  isRunning(): boolean;
  readonly queues: ReadonlyMap<string, Queue>;
  readonly pauses: AccountPauses;
  readonly results: ResultsStore;
  readonly metrics: PipelineMetrics;
  /** Stops fetching, lets active jobs finish within the grace period, hands back the rest. Idempotent. */
  close(): Promise<void>;
}

/** BullMQ's limiter must be set for `worker.rateLimit` to hold; the real limit is the RateGate's. */
const LIMITER_CEILING = 1_000_000_000;

/** After the grace period and the end of every request, how long active jobs get to be handed back. */
const HAND_BACK_MS = 2_000;

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

/** The webhooks of the accounts' results, when a webhook URL is configured. */
async function startWebhooksOf(
  options: StartWorkersOptions,
  results: ResultsStore,
  accountList: readonly AccountConfig[],
  parts: { errors: RepeatedErrors; metrics: PipelineMetrics; tracer: JobTracer },
) {
  const { config, connection, logger } = options;
  if (!config.webhook) return undefined;
  return startWebhooks({
    connection,
    prefix: config.redisPrefix,
    streams: results.streamKeys(accountList.map((a) => a.alias)),
    webhook: config.webhook,
    retentionMs: config.pipeline.retentionMs,
    logger,
    errors: parts.errors,
    metrics: parts.metrics,
    telemetry: parts.tracer.telemetry,
    ...(options.webhookDeliveries && { deliveries: options.webhookDeliveries }),
  });
}

/**
 * Serves the accounts, a worker for each account with work (processors/account-turns.ts), all
 * processing through the same pipeline.
 */
export async function startWorkers(options: StartWorkersOptions): Promise<RunningWorkers> {
  const { config, connection, logger } = options;
  const baseUrl = options.paymentsApiUrl ?? config.paymentsApiUrl;
  if (!baseUrl)
    throw new Error(
      "startWorkers: no Payments API URL (set PAYMENTS_API_URL or run the embedded sandbox)",
    );
  const accountList = options.accounts ?? config.accounts;
  const tracer = options.tracer ?? NO_TRACING;
  const accounts = new Map(accountList.map((a) => [a.alias, a]));
  const clients = createClients(config, baseUrl, accountList, options.adapter);
  const accountQueues =
    options.queues ??
    new AccountQueues(
      connection,
      config.redisPrefix,
      accountList.map((a) => a.alias),
      tracer.telemetry,
    );
  const ownQueues = options.queues ? undefined : accountQueues;
  const queues = accountQueues.byAccount;
  const metrics = options.metrics ?? pipelineMetricsOf(options, accountList);
  const errors =
    options.errors ?? new RepeatedErrors(logger, { count: countErrors(options.registry) });
  const ownErrors = options.errors ? undefined : errors;
  const pauses = new AccountPauses(connection, config.redisPrefix, queues);
  const { resultsConnection, results } = openResults(config, connection, logger);
  const gate = new RateGate(connection, config.redisPrefix, config.pipeline.rateWindowMarginMs);
  const writes = new LockedWrites(connection);
  const wakes = new LaneWakes();
  let turns: AccountTurns | undefined;
  const wakeListener = listenForWakes(
    watchRedisErrors(duplicateConnection(connection), logger, "wakes"),
    config.redisPrefix,
    { lanes: wakes, turns: () => turns?.wake() },
    logger,
  );

  // Before any worker runs, so the relay's consumer group exists before the first result.
  const webhooks = await startWebhooksOf(options, results, accountList, {
    errors,
    metrics,
    tracer,
  });
  const deps: ProcessorDeps = {
    accounts,
    clients,
    gate,
    writes,
    wakes,
    results,
    holds: new WorkHolds(connection, results),
    pauses,
    pipeline: config.pipeline,
    books: config.books,
    outflow: config.outflow,
    laneHolds: new LaneHolds(connection, results.keyspace),
    keyspace: results.keyspace,
    metrics,
    logger,
    tracer,
    ...(options.onResult && { onResult: options.onResult }),
  };
  await laneEarlierJobs(queues, connection, results.keyspace, logger);
  const budget = new InProgressBudget(config.pipeline.maxJobsInProgress);
  turns = startTurns(deps, queues, { ...options, errors, budget });
  const unreport = reportTurns(options.registry, turns);
  const rechecks = startRechecks(deps, accountList, queues, resultsConnection);
  const sweeps = startSweeps(
    config,
    deps,
    accountList,
    baseUrl,
    resultsConnection,
    options.adapter,
  );
  logger.info(
    { accounts: accountList.map((a) => a.alias), upstream: new URL(baseUrl).origin },
    "workers started",
  );

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= closeWorkers({
      config,
      logger,
      turns,
      clients,
      ownQueues,
      webhooks,
      resultsConnection,
      wakeListener,
      rechecks,
      sweeps,
      budget,
    }).finally(() => {
      ownErrors?.close();
      unreport();
    });
    return closing;
  };
  const isRunning = () => turns.isRunning();
  return { workers: turns.workers, isRunning, queues, pauses, results, metrics, close };
}

/** The pipeline's metrics, with series of their own for the accounts config names. */
function pipelineMetricsOf(
  options: StartWorkersOptions,
  accountList: readonly AccountConfig[],
): PipelineMetrics {
  const aliases = accountList.map((a) => a.alias);
  const accounts = new MetricAccounts(aliases, options.config.metrics.accounts);
  return createPipelineMetrics(options.registry, accounts);
}

/**
 * One client, with a connection pool of its own, per account: nothing one account sends or
 * suffers (an unsendable request, a hanging upstream, a jammed pool) can hold up another's.
 */
function createClients(
  config: Config,
  baseUrl: string,
  accountList: readonly AccountConfig[],
  adapter: ProviderAdapter | undefined,
): Map<string, PaymentsClient> {
  return new Map(
    accountList.map((a) => [
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

/**
 * Jobs an earlier release queued without a lane would be fetched before every lane. A failure
 * here (Redis away) leaves them where they are: fetched first, as before. Accounts side by
 * side: one account's backlog does not hold up the start of the others.
 */
async function laneEarlierJobs(
  queues: ReadonlyMap<string, Queue>,
  connection: RedisConnection,
  space: Keyspace,
  logger: Logger,
): Promise<void> {
  await Promise.all(
    [...queues].map(async ([alias, queue]) => {
      try {
        const moved = await laneUnlanedJobs(queue, connection, lanePassKey(space, alias));
        if (moved > 0)
          logger.info({ account: alias, jobs: moved }, "queued jobs moved into their lane");
      } catch (error) {
        logger.warn(
          { account: alias, err: (error as Error).message },
          "queued jobs not moved into their lane",
        );
      }
    }),
  );
}

/** The re-checks of succeeded payouts (processors/rechecks.ts), on the results' connection. */
function startRechecks(
  deps: ProcessorDeps,
  accountList: readonly AccountConfig[],
  queues: ReadonlyMap<string, Queue>,
  connection: RedisConnection,
): Rechecks {
  const { pipeline } = deps;
  const rechecks = new Rechecks({
    connection,
    space: deps.keyspace,
    gate: deps.gate,
    accounts: accountList,
    clients: deps.clients,
    queueKeys: new Map([...queues].map(([alias, q]) => [alias, q.qualifiedName])),
    results: deps.results,
    reversals: new Reversals(connection, {
      prefix: deps.keyspace.prefix,
      retentionMs: pipeline.retentionMs,
      maxLen: pipeline.resultsMaxLen,
    }),
    metrics: deps.metrics,
    logger: deps.logger,
    afterMs: deps.books.recheckAfterMs,
    toleranceMs: pipeline.rateWindowMarginMs / 2,
  });
  rechecks.start();
  return rechecks;
}

/** The periodic reconciliation sweeps, when MONEYQ_RECONCILE_EVERY is set. */
function startSweeps(
  config: Config,
  deps: ProcessorDeps,
  accountList: readonly AccountConfig[],
  baseUrl: string,
  connection: RedisConnection,
  adapter: ProviderAdapter | undefined,
): PeriodicSweeps | undefined {
  const everyMs = config.books.reconcileEveryMs;
  if (everyMs === undefined) return undefined;
  const sweeps = new PeriodicSweeps({
    sweeper: openSweeper(config, connection, baseUrl, adapter),
    accounts: accountList,
    everyMs,
    metrics: deps.metrics,
    logger: deps.logger,
  });
  sweeps.start();
  return sweeps;
}

/** The accounts' turns: a worker, under the budget, for each account with work. */
function startTurns(
  deps: ProcessorDeps,
  queues: ReadonlyMap<string, Queue>,
  options: StartWorkersOptions & {
    readonly errors: RepeatedErrors;
    readonly budget: InProgressBudget;
  },
): AccountTurns {
  const { config, budget } = options;
  const turns: AccountTurns = new AccountTurns({
    connection: options.connection,
    prefix: config.redisPrefix,
    queueKeys: new Map([...queues].map(([alias, q]) => [alias, q.qualifiedName])),
    maxActive: config.pipeline.maxActiveAccounts,
    lockDurationMs: config.pipeline.lockDurationMs,
    open: (alias) =>
      startAccountWorker(deps.accounts.get(alias) as AccountConfig, deps, { ...options, turns }),
    closed: (alias) => budget.remove(alias),
    errors: options.errors,
  });
  turns.start();
  return turns;
}

/** The BullMQ worker of one account's queue. */
function startAccountWorker(
  account: AccountConfig,
  deps: ProcessorDeps,
  options: StartWorkersOptions & {
    readonly errors: RepeatedErrors;
    readonly budget: InProgressBudget;
    readonly turns: AccountTurns;
  },
): Worker {
  const { config, connection, logger, budget, turns } = options;
  let self: Worker | undefined;
  const processJob = createJobProcessor(deps, () => self as Worker);
  const processor: typeof processJob = (job, token, signal) =>
    turns.around(account.alias, () =>
      budget.admits(account.alias)
        ? budget.run(account.alias, () => processJob(job, token, signal))
        : backToWait(job, token),
    );
  self = new Worker<JobData, void>(accountQueueName(deps.keyspace, account.alias), processor, {
    connection,
    prefix: config.redisPrefix,
    concurrency: account.concurrency,
    limiter: { max: LIMITER_CEILING, duration: 1000 },
    lockDuration: config.pipeline.lockDurationMs,
    stalledInterval: config.pipeline.stalledIntervalMs,
    // Processing is idempotent, so a job whose worker died is simply run again.
    maxStalledCount: 1_000,
    ...(deps.tracer.telemetry && { telemetry: deps.tracer.telemetry }),
    settings: {
      backoffStrategy: (attemptsMade: number, _type?: string, error?: Error) =>
        retryDelayMs(attemptsMade, error),
    },
  });
  // A Redis outage makes each worker connection fail several times a second: one line per
  // outage. A Redis that refuses (out of memory) fails every loop: one line per interval.
  const outage = outageLog(logger, `worker ${account.alias}`);
  self.on("error", (error) => {
    if (isRedisConnectionError(error)) outage.failed(error);
    else options.errors.report("worker", "worker error", error, { account: account.alias });
  });
  onReconnected(self, () => outage.restored());
  // BullMQ does not abort a job whose lock it could not renew; the job's signal tells the
  // processor to stop, so a worker that lost a job sends nothing more for it.
  const worker = self;
  worker.on("lockRenewalFailed", (jobIds) => {
    for (const jobId of jobIds) worker.cancelJob(jobId, "lock lost");
  });
  budget.add(account.alias, worker, account.concurrency);
  return worker;
}

interface Running {
  readonly config: Config;
  readonly logger: Logger;
  readonly turns: AccountTurns;
  readonly clients: ReadonlyMap<string, PaymentsClient>;
  readonly ownQueues: AccountQueues | undefined;
  readonly webhooks: RunningWebhooks | undefined;
  readonly resultsConnection: RedisConnection;
  readonly wakeListener: { close(): Promise<void> };
  readonly rechecks: Rechecks;
  readonly sweeps: PeriodicSweeps | undefined;
  readonly budget: InProgressBudget;
}

/** Stops fetching, lets active jobs finish within the grace period, hands back the rest. */
async function closeWorkers(running: Running): Promise<void> {
  const { config, logger, turns, clients, ownQueues, webhooks, resultsConnection, wakeListener } =
    running;
  await turns.stop();
  const rechecksClosed = running.rechecks.close();
  const sweepsClosed = running.sweeps?.close();
  // Alongside the workers, within the same grace period: a slow webhook receiver must not
  // hold the shutdown past its bound.
  const webhooksClosed = webhooks?.close(config.pipeline.shutdownGraceMs).catch(() => undefined);
  running.budget.close();
  const graceful = Promise.allSettled([...turns.workers.values()].map((w) => w.close()));
  const within = (ms: number) =>
    Promise.race([
      graceful.then(() => false),
      new Promise<boolean>((resolve) => setTimeout(resolve, ms, true).unref()),
    ]);
  const timedOut = await within(config.pipeline.shutdownGraceMs);
  if (timedOut) {
    // A request that hangs would hold its job (and BullMQ's close) for as long as it
    // hangs: end every request in flight; their jobs go back to the queue as retries, or
    // keep their locks until those expire and any worker takes them back.
    logger.warn(
      { graceMs: config.pipeline.shutdownGraceMs },
      "grace period over: ending requests in flight and handing back active jobs",
    );
    await Promise.allSettled([...clients.values()].map((c) => c.destroy()));
    await within(HAND_BACK_MS);
  }
  await turns.release();
  await webhooksClosed;
  await rechecksClosed;
  await sweepsClosed;
  await ownQueues?.close();
  await Promise.allSettled([...clients.values()].map((c) => c.close()));
  await closeRedis(resultsConnection);
  await wakeListener.close();
  logger.info("workers stopped");
}
