import { Registry } from "prom-client";
import { afterAll, beforeAll } from "vitest";
import { type Config, loadConfig } from "../../src/config/load-config.js";
import { createLogger } from "../../src/logger.js";
import { Producer } from "../../src/queues/producer.js";
import type { RedisConnection } from "../../src/redis/connection.js";
import { type Keyspace, resultsStreamKey } from "../../src/redis/keys.js";
import { JobResult } from "../../src/results/job-result.js";
import type { SandboxAccountSeed, SandboxOptions } from "../../src/sandbox/index.js";
import { type RunningWorkers, startWorkers } from "../../src/service/start-workers.js";
import { useTestRedis } from "./redis.js";
import { type TestSandbox, useSandbox } from "./sandbox.js";
import { waitFor } from "./wait-until.js";

/** A producer as the service builds one from `config`. */
export function producerFor(config: Config, connection: RedisConnection): Producer {
  return new Producer({
    connection,
    prefix: config.redisPrefix,
    accounts: config.accounts.map((a) => a.alias),
    maxAttempts: config.pipeline.maxAttempts,
    retentionMs: config.pipeline.retentionMs,
    profile: config.provider,
  });
}

export interface PipelineHarness {
  readonly sb: TestSandbox;
  readonly redis: ReturnType<typeof useTestRedis>;
  config(): Config;
  connection(): RedisConnection;
  /** The pipeline's keyspace (its prefix, on a cluster or a single Redis). */
  space(): Keyspace;
  producer(): Producer;
  workers(): RunningWorkers;
  /** Starts (another set of) workers in this process. */
  startMoreWorkers(): Promise<RunningWorkers>;
  /** Results on the stream so far. */
  results(): Promise<JobResult[]>;
  /** Waits (polling, bounded) until `count` results are on the stream. */
  waitForResults(count: number, timeoutMs?: number): Promise<JobResult[]>;
  /** Environment of the config, for child processes. */
  env(): Record<string, string>;
  /** Waits (polling, bounded) for a terminal result of one job, the `skip + 1`-th if it had earlier ones. */
  resultOf(jobId: string, timeoutMs?: number, skip?: number): Promise<JobResult>;
}

/**
 * A sandbox, real Redis under a private prefix, config through loadConfig, a producer and
 * workers, for one test file. `env` adds variables (for example MONEYQ_MAX_ATTEMPTS).
 */
export function usePipeline(
  env: Record<string, string> = {},
  options: {
    settleDelayMs?: number;
    startWorkers?: boolean;
    sandboxAccounts?: SandboxAccountSeed[];
    /** More sandbox options: a provider dialect (profile, specMinimal). */
    sandbox?: SandboxOptions;
  } = {},
): PipelineHarness {
  const sb = useSandbox({
    ...options.sandbox,
    settleDelayMs: options.settleDelayMs ?? 50,
    ...(options.sandboxAccounts && { accounts: options.sandboxAccounts }),
  });
  const redis = useTestRedis("pipe");
  let config: Config | undefined;
  let connection: RedisConnection | undefined;
  let producer: Producer | undefined;
  let workers: RunningWorkers | undefined;
  const extra: RunningWorkers[] = [];
  let fullEnv: Record<string, string> = {};

  const start = async () => {
    const c = config as Config;
    const w = await startWorkers({
      config: c,
      connection: connection as RedisConnection,
      logger: createLogger(c.logLevel),
      registry: new Registry(),
    });
    return w;
  };

  beforeAll(async () => {
    fullEnv = {
      REDIS_URL: redis.url,
      PAYMENTS_API_URL: sb.sandbox.baseUrl,
      PAYMENTS_API_KEY: sb.sandbox.apiKey,
      MONEYQ_REDIS_PREFIX: redis.prefix,
      MONEYQ_LOG_LEVEL: "silent",
      MONEYQ_RATE_LIMIT_PER_SECOND: "10000",
      MONEYQ_CONCURRENCY: "32",
      ...env,
    };
    config = loadConfig(fullEnv);
    connection = redis.connect();
    producer = producerFor(config, connection);
    if (options.startWorkers !== false) workers = await start();
  });
  afterAll(async () => {
    await Promise.allSettled([workers?.close(), ...extra.map((w) => w.close()), producer?.close()]);
  });

  // Read incrementally: re-parsing the whole stream on every poll would load this process
  // (and the sandbox in it) and distort what the sandbox measures.
  // One stream, or one per account on a cluster: each read from where the last read ended.
  const seen: JobResult[] = [];
  const cursors = new Map<string, string>();
  const results = async () => {
    const c = config as Config;
    const space = redis.space(c.redisPrefix);
    const streams = new Set(c.accounts.map((a) => resultsStreamKey(space, a.alias)));
    for (const stream of streams) {
      const cursor = cursors.get(stream) ?? "-";
      const entries = await (connection as RedisConnection).xrange(stream, cursor, "+");
      for (const [id, fields] of entries) {
        if (id === cursor) continue;
        // Job results; batch events (an `event` field alone) are read by the tests about them.
        if (fields[0] === "result") seen.push(JobResult.parse(JSON.parse(fields[1] as string)));
        cursors.set(stream, id);
      }
    }
    return [...seen];
  };

  return {
    sb,
    redis,
    config: () => config as Config,
    connection: () => connection as RedisConnection,
    space: () => redis.space((config as Config).redisPrefix),
    producer: () => producer as Producer,
    workers: () => {
      if (!workers) throw new Error("workers not started");
      return workers;
    },
    async startMoreWorkers() {
      const w = await start();
      extra.push(w);
      if (!workers) workers = w;
      return w;
    },
    results,
    waitForResults: (count, timeoutMs = 20_000) =>
      waitFor(
        results,
        (found) => found.length >= count,
        timeoutMs,
        (found) => `${count} results, have ${found.length}`,
      ),
    env: () => fullEnv,
    async resultOf(jobId, timeoutMs = 20_000, skip = 0) {
      const nth = async () => (await results()).filter((r) => r.jobId === jobId)[skip];
      const found = await waitFor(nth, (r) => r !== undefined, timeoutMs, `the result of ${jobId}`);
      return found as JobResult;
    },
  };
}
