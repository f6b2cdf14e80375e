import { Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { Registry } from "prom-client";
import { type Dispatcher, Pool } from "undici";
import { PaymentsClient } from "../client/payments-client.js";
import { retryDelayMs } from "../client/retry.js";
import type { AccountConfig, Config } from "../config.js";
import type { Logger } from "../logger.js";
import { createPipelineMetrics, type PipelineMetrics } from "../metrics/pipeline-metrics.js";
import { AccountPauses } from "../queues/account-pauses.js";
import { accountQueueName } from "../queues/queue-names.js";
import type { JobResult } from "../results/job-result.js";
import { ResultsStore } from "../results/results-store.js";
import { startWebhooks } from "../results/webhook-delivery.js";
import { createJobProcessor, type JobData } from "./job-processor.js";
import { RateGate } from "./rate-gate.js";

export interface StartWorkersOptions {
  readonly config: Config;
  /** Upstream base URL; defaults to config.paymentsApiUrl (the composition root sets the embedded sandbox's). */
  readonly paymentsApiUrl?: string;
  /** Accounts to work for; defaults to config.accounts. */
  readonly accounts?: readonly AccountConfig[];
  /** For queues, gate and results. Workers open their own blocking connections from it. The caller closes it. */
  readonly connection: Redis;
  readonly logger: Logger;
  readonly registry: Registry;
  /** What the workers record; default: the pipeline's metrics defined on `registry`. */
  readonly metrics?: PipelineMetrics;
  /** Shared by every account's client; default: a Pool of the workers' own. */
  readonly dispatcher?: Dispatcher;
  readonly onResult?: (result: JobResult) => Promise<void>;
}

export interface RunningWorkers {
  readonly workers: ReadonlyMap<string, Worker>;
  readonly queues: ReadonlyMap<string, Queue>;
  readonly pauses: AccountPauses;
  readonly results: ResultsStore;
  readonly metrics: PipelineMetrics;
  /** Stops fetching, lets active jobs finish within the grace period, hands back the rest. Idempotent. */
  close(): Promise<void>;
}

/** BullMQ's limiter must be set for `worker.rateLimit` to hold; the real limit is the RateGate's. */
const LIMITER_CEILING = 1_000_000_000;

/** Starts one worker per account, all of them processing through the same pipeline. */
export async function startWorkers(options: StartWorkersOptions): Promise<RunningWorkers> {
  const { config, connection, logger } = options;
  const baseUrl = options.paymentsApiUrl ?? config.paymentsApiUrl;
  if (!baseUrl)
    throw new Error(
      "startWorkers: no Payments API URL (set PAYMENTS_API_URL or run the embedded sandbox)",
    );
  const accountList = options.accounts ?? config.accounts;
  const accounts = new Map(accountList.map((a) => [a.alias, a]));
  const ownsDispatcher = options.dispatcher === undefined;
  const dispatcher =
    options.dispatcher ??
    new Pool(new URL(baseUrl).origin, {
      connections: Math.max(
        8,
        accountList.reduce((n, a) => n + a.concurrency, 0),
      ),
      connect: { timeout: config.http.connectTimeoutMs },
      headersTimeout: config.http.requestTimeoutMs,
      bodyTimeout: config.http.requestTimeoutMs,
    });
  const clients = new Map(
    accountList.map((a) => [
      a.alias,
      new PaymentsClient({
        baseUrl,
        apiKey: a.apiKey,
        dispatcher,
        requestTimeoutMs: config.http.requestTimeoutMs,
      }),
    ]),
  );
  const queues = new Map(
    accountList.map((a) => [
      a.alias,
      new Queue(accountQueueName(a.alias), { connection, prefix: config.redisPrefix }),
    ]),
  );
  const metrics =
    options.metrics ??
    createPipelineMetrics(
      options.registry,
      accountList.map((a) => a.alias),
    );
  const pauses = new AccountPauses(connection, config.redisPrefix, queues);
  // Results are emitted on a connection of their own, so a large emission never holds up the
  // rate gate's replies on the shared one. No auto-pipelining: the store gathers concurrent
  // results into one call itself, and auto-pipelining would only hold each call back a turn.
  const resultsConnection = connection.duplicate();
  const results = new ResultsStore(resultsConnection, {
    prefix: config.redisPrefix,
    retentionMs: config.pipeline.retentionMs,
    maxLen: config.pipeline.resultsMaxLen,
  });
  const gate = new RateGate(connection, config.redisPrefix, config.pipeline.rateWindowMarginMs);

  // Before any worker runs, so the relay's consumer group exists before the first result.
  const webhooks = config.webhook
    ? await startWebhooks({
        connection,
        prefix: config.redisPrefix,
        streamKey: results.streamKey,
        webhook: config.webhook,
        retentionMs: config.pipeline.retentionMs,
        logger,
        metrics,
      })
    : undefined;
  const workers = new Map<string, Worker>();
  for (const account of accountList) {
    let self: Worker | undefined;
    const processor = createJobProcessor(
      {
        accounts,
        clients,
        gate,
        results,
        pauses,
        pipeline: config.pipeline,
        prefix: config.redisPrefix,
        metrics,
        logger,
        ...(options.onResult && { onResult: options.onResult }),
      },
      () => self as Worker,
    );
    self = new Worker<JobData, void>(accountQueueName(account.alias), processor, {
      connection,
      prefix: config.redisPrefix,
      concurrency: account.concurrency,
      limiter: { max: LIMITER_CEILING, duration: 1000 },
      lockDuration: config.pipeline.lockDurationMs,
      stalledInterval: config.pipeline.stalledIntervalMs,
      // Processing is idempotent, so a job whose worker died is simply run again.
      maxStalledCount: 1_000,
      settings: {
        backoffStrategy: (attemptsMade: number, _type?: string, error?: Error) =>
          retryDelayMs(attemptsMade, error),
      },
    });
    self.on("error", (error) =>
      logger.error({ account: account.alias, err: error.message }, "worker error"),
    );
    workers.set(account.alias, self);
  }
  logger.info(
    { accounts: accountList.map((a) => a.alias), upstream: new URL(baseUrl).origin },
    "workers started",
  );

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      const graceful = Promise.allSettled([...workers.values()].map((w) => w.close()));
      const timedOut = await Promise.race([
        graceful.then(() => false),
        new Promise<boolean>((resolve) =>
          setTimeout(resolve, config.pipeline.shutdownGraceMs, true).unref(),
        ),
      ]);
      if (timedOut) {
        // Active jobs keep their locks; once those expire, any worker takes the jobs back.
        logger.warn(
          { graceMs: config.pipeline.shutdownGraceMs },
          "grace period over: handing back active jobs",
        );
        await Promise.allSettled([...workers.values()].map((w) => w.close(true)));
      }
      await webhooks?.close().catch(() => undefined);
      await Promise.allSettled([...queues.values()].map((q) => q.close()));
      await Promise.allSettled([...clients.values()].map((c) => c.close()));
      if (ownsDispatcher) await dispatcher.close().catch(() => undefined);
      await resultsConnection.quit().catch(() => resultsConnection.disconnect());
      logger.info("workers stopped");
    })();
    return closing;
  };
  return { workers, queues, pauses, results, metrics, close };
}
