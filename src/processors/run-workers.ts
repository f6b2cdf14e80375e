import { type Queue, Worker } from "bullmq";
import type { PaymentsClient } from "../client/payments-client.js";
import { retryDelayMs } from "../client/retry.js";
import type { AccountConfig, Config } from "../config/load-config.js";
import type { Logger } from "../logger.js";
import type { PipelineMetrics } from "../metrics/pipeline-metrics.js";
import { reportTurns } from "../metrics/turn-metrics.js";
import type { AccountPauses } from "../queues/account-pauses.js";
import type { JobData } from "../queues/job-data.js";
import { accountQueueName } from "../queues/queue-names.js";
import { onReconnected } from "../redis/bullmq-internals.js";
import { duplicateConnection } from "../redis/connection.js";
import { isRedisConnectionError, outageLog, watchRedisErrors } from "../redis/errors.js";
import type { ResultsStore } from "../results/results-store.js";
import { AccountTurns } from "./account-turns.js";
import { InProgressBudget } from "./in-progress-budget.js";
import { backToWait } from "./job-moves.js";
import { createJobProcessor } from "./job-processor.js";
import { LaneWakes, listenForWakes } from "./lane-wakes.js";
import { PeriodicSweeps } from "./periodic-sweeps.js";
import type { ProcessorDeps } from "./processor-deps.js";
import { Rechecks } from "./rechecks.js";
import type { WorkerParts } from "./worker-parts.js";

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
 * Serves the accounts on `parts`, a worker for each account with work
 * (processors/account-turns.ts), all processing through the same pipeline. Closing stops the
 * workers and leaves the parts open for their owner to close.
 */
export function runWorkers(parts: WorkerParts): RunningWorkers {
  const { config, logger, accounts } = parts;
  // Read before anything starts: a base URL it refuses leaves nothing running.
  const upstream = new URL(parts.baseUrl).origin;
  const queues = parts.queues.byAccount;
  const wakes = new LaneWakes();
  let turns: AccountTurns | undefined;
  const wakeListener = listenForWakes(
    watchRedisErrors(duplicateConnection(parts.connection), logger, "wakes"),
    config.redisPrefix,
    { lanes: wakes, turns: () => turns?.wake() },
    logger,
  );
  const deps = processorDeps(parts, wakes);
  const budget = new InProgressBudget(config.pipeline.maxJobsInProgress);
  turns = startTurns(deps, parts, budget);
  const unreport = reportTurns(parts.registry, turns);
  const rechecks = startRechecks(deps, parts);
  const sweeps = startSweeps(deps, parts);
  logger.info({ accounts: accounts.map((a) => a.alias), upstream }, "workers started");

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= closeWorkers({
      config,
      logger,
      turns,
      clients: parts.clients,
      wakeListener,
      rechecks,
      sweeps,
      budget,
    }).finally(unreport);
    return closing;
  };
  const isRunning = () => turns.isRunning();
  const { pauses, results, metrics } = parts;
  return { workers: turns.workers, isRunning, queues, pauses, results, metrics, close };
}

/** What each job's processing is handed. */
function processorDeps(parts: WorkerParts, wakes: LaneWakes): ProcessorDeps {
  const { config } = parts;
  return {
    accounts: new Map(parts.accounts.map((a) => [a.alias, a])),
    clients: parts.clients,
    gate: parts.gate,
    writes: parts.writes,
    wakes,
    results: parts.results,
    holds: parts.holds,
    pauses: parts.pauses,
    pipeline: config.pipeline,
    books: config.books,
    outflow: config.outflow,
    laneHolds: parts.laneHolds,
    keyspace: parts.results.keyspace,
    metrics: parts.metrics,
    logger: parts.logger,
    tracer: parts.tracer,
    ...(parts.onResult && { onResult: parts.onResult }),
  };
}

/** The re-checks of succeeded payouts (processors/rechecks.ts), on the results' connection. */
function startRechecks(deps: ProcessorDeps, parts: WorkerParts): Rechecks {
  const { pipeline } = deps;
  const rechecks = new Rechecks({
    connection: parts.resultsConnection,
    space: deps.keyspace,
    gate: deps.gate,
    accounts: parts.accounts,
    clients: deps.clients,
    queueKeys: queueKeys(parts),
    results: deps.results,
    reversals: parts.reversals,
    metrics: deps.metrics,
    logger: deps.logger,
    afterMs: deps.books.recheckAfterMs,
    toleranceMs: pipeline.rateWindowMarginMs / 2,
  });
  rechecks.start();
  return rechecks;
}

/** The periodic reconciliation sweeps, when MONEYQ_RECONCILE_EVERY is set. */
function startSweeps(deps: ProcessorDeps, parts: WorkerParts): PeriodicSweeps | undefined {
  const everyMs = parts.config.books.reconcileEveryMs;
  if (everyMs === undefined || parts.sweeper === undefined) return undefined;
  const sweeps = new PeriodicSweeps({
    sweeper: parts.sweeper,
    accounts: parts.accounts,
    everyMs,
    metrics: deps.metrics,
    logger: deps.logger,
  });
  sweeps.start();
  return sweeps;
}

/** Each account's BullMQ queue key, by alias. */
function queueKeys(parts: WorkerParts): Map<string, string> {
  return new Map([...parts.queues.byAccount].map(([alias, q]) => [alias, q.qualifiedName]));
}

/** The accounts' turns: a worker, under the budget, for each account with work. */
function startTurns(
  deps: ProcessorDeps,
  parts: WorkerParts,
  budget: InProgressBudget,
): AccountTurns {
  const { config } = parts;
  const turns: AccountTurns = new AccountTurns({
    connection: parts.connection,
    prefix: config.redisPrefix,
    queueKeys: queueKeys(parts),
    maxActive: config.pipeline.maxActiveAccounts,
    lockDurationMs: config.pipeline.lockDurationMs,
    open: (alias) =>
      startAccountWorker(deps.accounts.get(alias) as AccountConfig, deps, {
        parts,
        budget,
        turns,
      }),
    closed: (alias) => budget.remove(alias),
    errors: parts.errors,
  });
  turns.start();
  return turns;
}

/** The BullMQ worker of one account's queue. */
function startAccountWorker(
  account: AccountConfig,
  deps: ProcessorDeps,
  running: {
    readonly parts: WorkerParts;
    readonly budget: InProgressBudget;
    readonly turns: AccountTurns;
  },
): Worker {
  const { parts, budget, turns } = running;
  const { config, connection, logger } = parts;
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
    else parts.errors.report("worker", "worker error", error, { account: account.alias });
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
  readonly wakeListener: { close(): Promise<void> };
  readonly rechecks: Rechecks;
  readonly sweeps: PeriodicSweeps | undefined;
  readonly budget: InProgressBudget;
}

/**
 * Stops fetching, lets active jobs finish within the grace period, hands back the rest; past
 * the grace period, ends the clients' requests in flight (the clients stay open).
 */
async function closeWorkers(running: Running): Promise<void> {
  const { config, logger, turns, clients, wakeListener } = running;
  await turns.stop();
  const rechecksClosed = running.rechecks.close();
  const sweepsClosed = running.sweeps?.close();
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
  await rechecksClosed;
  await sweepsClosed;
  await wakeListener.close();
  logger.info("workers stopped");
}
