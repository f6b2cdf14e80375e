import { Queue } from "bullmq";
import type { Registry } from "prom-client";
import { type RunningApi, startApi } from "./api/start-api.js";
import { Batches } from "./batches/batches.js";
import {
  type AccountConfig,
  type ApiToken,
  account,
  type Config,
  DEFAULT_ACCOUNT_ALIAS,
} from "./config.js";
import { redactUrl } from "./embedded/redact-url.js";
import { serviceRedis } from "./embedded/service-redis.js";
import { createLogger, type Logger } from "./logger.js";
import { createMetricsRegistry } from "./metrics/metrics-registry.js";
import { type RunningMetricsServer, startMetricsServer } from "./metrics/metrics-server.js";
import { registerRedisMetrics } from "./metrics/redis-metrics.js";
import { type RunningWorkers, startWorkers } from "./processors/start-workers.js";
import { AccountPauses } from "./queues/account-pauses.js";
import { DeadLetters } from "./queues/dead-letters.js";
import { Producer } from "./queues/producer.js";
import { accountQueueName } from "./queues/queue-names.js";
import { createRedis } from "./redis-connection.js";
import { checkRedisSafety } from "./redis-safety.js";
import { ResultsStore } from "./results/results-store.js";
import { DEMO_API_KEY, type RunningSandbox, startSandbox } from "./sandbox/index.js";
import type { Role } from "./service-roles.js";

/**
 * The API token of a service whose upstream is the embedded sandbox and which has no
 * MONEYQ_API_TOKENS: it moves no real money, so a documented token is safe there (README).
 */
export const EMBEDDED_DEV_TOKEN = "mq_dev_embedded_sandbox_token";

export interface ServiceOptions {
  readonly config: Config;
  /** Default "all": API and workers in one process. */
  readonly role?: Role;
  readonly logger?: Logger;
  /** Overrides config.api.port (0: a free port; the demo uses it). */
  readonly apiPort?: number;
  /** Overrides config.metrics.port of a worker-only process (0: a free port). */
  readonly metricsPort?: number;
}

export interface Service {
  readonly role: Role;
  /** The first log line: role, and which parts run embedded. */
  readonly startupMessage: string;
  /** The API's address; undefined in a worker-only process. */
  readonly apiUrl: string | undefined;
  /** Where this process serves /metrics: the API's, or a worker-only process's metrics port. */
  readonly metricsUrl: string;
  /** The upstream's base URL (the embedded sandbox's when none is configured). */
  readonly upstreamUrl: string;
  readonly redisUrl: string;
  /** True when the Redis is a private redis-server that stops with the service. */
  readonly embeddedRedis: boolean;
  /** Set when moneyq runs the sandbox itself. */
  readonly sandbox: RunningSandbox | undefined;
  readonly accounts: readonly AccountConfig[];
  readonly tokens: readonly ApiToken[];
  readonly producer: Producer;
  readonly batches: Batches;
  readonly results: ResultsStore;
  readonly workers: RunningWorkers | undefined;
  readonly registry: Registry;
  readonly logger: Logger;
  /** API, workers, queues, Redis, then embedded parts. Idempotent; every step runs. */
  close(): Promise<void>;
}

/** Refused start: Redis may lose jobs and MONEYQ_REQUIRE_SAFE_REDIS is set. */
export class UnsafeRedisError extends Error {
  readonly code = "unsafe_redis";
}

/** Runs every step even when one fails; logs the failures. */
async function runAll(logger: Logger, steps: [string, () => Promise<unknown> | undefined][]) {
  for (const [name, step] of steps) {
    try {
      await step();
    } catch (error) {
      logger.error({ step: name, err: String(error) }, "shutdown step failed");
    }
  }
}

/**
 * Composes a moneyq process from configuration. With no PAYMENTS_API_URL it runs the sandbox
 * in-process; with no Redis answering at REDIS_URL it starts a private redis-server. The first
 * log line says which.
 */
export async function startService(options: ServiceOptions): Promise<Service> {
  const { config } = options;
  const role = options.role ?? "all";
  const logger = options.logger ?? createLogger(config.logLevel);
  const cleanup: [string, () => Promise<unknown> | undefined][] = [];
  const stopAll = () => runAll(logger, cleanup.reverse());
  try {
    const redis = await serviceRedis(config.redisUrl);
    cleanup.push(["private redis-server", () => redis.stop()]);
    const embedded = config.paymentsApiUrl === undefined;
    const sandbox = embedded && role !== "api" ? await startSandbox() : undefined;
    if (sandbox) cleanup.push(["embedded sandbox", () => sandbox.close()]);
    const accounts = embedded
      ? [
          account(
            DEFAULT_ACCOUNT_ALIAS,
            DEMO_API_KEY,
            config.accountDefaults.ratePerSecond,
            config.accountDefaults.concurrency,
          ),
        ]
      : config.accounts;
    const upstreamUrl = sandbox?.baseUrl ?? config.paymentsApiUrl ?? "embedded sandbox";
    const startupMessage = [
      `moneyq starting (${role})`,
      embedded &&
        `no PAYMENTS_API_URL: the embedded sandbox${sandbox ? ` at ${sandbox.baseUrl}` : ""} is the upstream (no real money moves)`,
      redis.embeddedBecause &&
        `Redis did not answer at ${redactUrl(config.redisUrl)} (${redis.embeddedBecause}): jobs live in a private redis-server at ${redis.url} and are lost when this process exits`,
    ]
      .filter(Boolean)
      .join("; ");
    logger.info(
      {
        role,
        upstream: embedded ? "embedded sandbox" : upstreamUrl,
        redis: redis.embeddedBecause ? "private redis-server" : redactUrl(redis.url),
      },
      startupMessage,
    );

    const connection = createRedis(redis.url);
    cleanup.push(["redis", () => connection.quit().catch(() => connection.disconnect())]);
    const safety = await checkRedisSafety(connection);
    for (const warning of safety.warnings) logger.warn({ redis: redactUrl(redis.url) }, warning);
    if (!safety.safe && config.requireSafeRedis) {
      throw new UnsafeRedisError(
        `refusing to start (MONEYQ_REQUIRE_SAFE_REDIS): ${safety.warnings.join("; ")}`,
      );
    }

    const registry = createMetricsRegistry(role);
    const aliases = accounts.map((a) => a.alias);
    const producer = new Producer({
      connection,
      prefix: config.redisPrefix,
      accounts: aliases,
      maxAttempts: config.pipeline.maxAttempts,
      retentionMs: config.pipeline.retentionMs,
    });
    cleanup.push(["producer", () => producer.close()]);
    const results = new ResultsStore(connection, {
      prefix: config.redisPrefix,
      retentionMs: config.pipeline.retentionMs,
      maxLen: config.pipeline.resultsMaxLen,
    });
    const batches = new Batches({ connection, prefix: config.redisPrefix, producer, results });
    const queues = new Map(
      aliases.map((alias) => [
        alias,
        new Queue(accountQueueName(alias), { connection, prefix: config.redisPrefix }),
      ]),
    );
    cleanup.push(["queues", () => Promise.allSettled([...queues.values()].map((q) => q.close()))]);

    const workers =
      role === "api"
        ? undefined
        : await startWorkers({
            config,
            paymentsApiUrl: upstreamUrl,
            accounts,
            connection,
            logger,
            registry,
          });
    if (workers) cleanup.push(["workers", () => workers.close()]);
    const pauses = workers?.pauses ?? new AccountPauses(connection, config.redisPrefix, queues);
    registerRedisMetrics(registry, {
      connection,
      prefix: config.redisPrefix,
      queues,
      pauses,
      resultsStreamKey: results.streamKey,
      cacheMs: config.metrics.cacheMs,
    });
    let metricsServer: RunningMetricsServer | undefined;
    if (role === "worker") {
      metricsServer = await startMetricsServer({
        registry,
        host: config.metrics.host,
        port: options.metricsPort ?? config.metrics.port,
      });
      const running = metricsServer;
      cleanup.push(["metrics server", () => running.close()]);
      logger.info({ metrics: running.url }, `metrics at ${running.url}/metrics`);
    }

    const tokens = config.api.tokens.length === 0 && embedded ? [devToken()] : config.api.tokens;
    let shuttingDown = false;
    let api: RunningApi | undefined;
    if (role !== "worker") {
      if (tokens.length === 0)
        logger.warn(
          "no MONEYQ_API_TOKENS: the API refuses every request but health, readiness and metrics",
        );
      api = await startApi(
        {
          tokens,
          producer,
          batches,
          results,
          queues,
          pauses,
          deadLetters: new DeadLetters(connection, config.redisPrefix, results),
          registry,
          logger,
          bodyLimitBytes: config.api.bodyLimitBytes,
          readiness: async () => ({
            redis: await connection.ping().then(
              () => true,
              () => false,
            ),
            workers: workers
              ? [...workers.workers.values()].every((w) => w.isRunning())
              : undefined,
            shuttingDown,
          }),
        },
        { host: config.api.host, port: options.apiPort ?? config.api.port },
      );
      const running = api;
      cleanup.push(["api", () => running.close()]);
      logger.info({ api: api.url }, `API listening on ${api.url} (metrics at ${api.url}/metrics)`);
    }

    let closing: Promise<void> | undefined;
    return {
      role,
      startupMessage,
      apiUrl: api?.url,
      metricsUrl: metricsServer ? `${metricsServer.url}/metrics` : `${api?.url}/metrics`,
      upstreamUrl,
      redisUrl: redis.url,
      embeddedRedis: redis.embeddedBecause !== undefined,
      sandbox,
      accounts,
      tokens,
      producer,
      batches,
      results,
      workers,
      registry,
      logger,
      close() {
        shuttingDown = true;
        closing ??= stopAll();
        return closing;
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

function devToken(): ApiToken {
  const token = { name: "dev", accounts: Object.freeze([DEFAULT_ACCOUNT_ALIAS]) } as ApiToken;
  Object.defineProperty(token, "token", { value: EMBEDDED_DEV_TOKEN, enumerable: false });
  return Object.freeze(token);
}

/** On SIGTERM or SIGINT: close, then exit 0 (1 if closing failed). */
export function closeOnSignals(service: { close(): Promise<void> }, logger: Logger): void {
  const stop = (signal: string) => {
    logger.info({ signal }, "shutting down");
    service.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
}
