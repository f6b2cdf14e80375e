import type { Registry } from "prom-client";
import type { ApiDeps } from "../api/api-deps.js";
import { type RunningApi, startApi } from "../api/start-api.js";
import type { Batches } from "../batches/batches.js";
import { migrateLegacyBatchKeys } from "../batches/legacy-batch-keys.js";
import {
  type AccountConfig,
  type ApiToken,
  CONFIG_DEFAULTS,
  type Config,
  ConfigError,
  DEFAULT_ACCOUNT_ALIAS,
  embeddedUpstream,
  PERMISSIONS,
} from "../config/load-config.js";
import { MoneyqError } from "../errors/moneyq-error.js";
import { listenProblem } from "../listen-url.js";
import { createLogger, type Logger } from "../logger.js";
import { countErrors } from "../metrics/error-metrics.js";
import { MetricAccounts } from "../metrics/metric-accounts.js";
import { createMetricsRegistry } from "../metrics/metrics-registry.js";
import { type RunningMetricsServer, startMetricsServer } from "../metrics/metrics-server.js";
import { registerReconciliationMetrics } from "../metrics/reconciliation-metrics.js";
import { registerRedisMetrics } from "../metrics/redis-metrics.js";
import { balanceSource } from "../processors/provider-lookup.js";
import type { ProviderAdapter } from "../provider/adapter.js";
import { DEFAULT_PROVIDER_PROFILE } from "../provider/profile.js";
import { migrateLegacyPauses } from "../queues/account-pauses.js";
import type { Producer } from "../queues/producer.js";
import { closeRedis } from "../redis/close.js";
import type { RedisConnection } from "../redis/connection.js";
import { createRedis } from "../redis/connection.js";
import { readyCheckKeys } from "../redis/keys.js";
import { redactUrl } from "../redis/redact-url.js";
import { RepeatedErrors } from "../redis/repeated-errors.js";
import { checkRedisSafety } from "../redis/safety.js";
import { redisSource, type ServiceRedis, serviceRedis } from "../redis/service-redis.js";
import type { RedisSource } from "../redis/unavailable-error.js";
import { RedisWriteCheck } from "../redis/write-check.js";
import type { ResultsStore } from "../results/results-store.js";
import { type RunningSandbox, startSandbox } from "../sandbox/index.js";
import { startTracing } from "../tracing/start-tracing.js";
import { openProviderLookups } from "./open-lookups.js";
import { openParts, type SharedParts, serviceAccounts } from "./open-parts.js";
import { openProviderAdapter } from "./provider-adapter.js";
import type { Role } from "./roles.js";
import { type RunningWorkers, startWorkers } from "./start-workers.js";
import { sweepUnsealedBatches } from "./unsealed-sweep.js";

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
  /** How long active jobs get to finish when the service closes (MONEYQ_SHUTDOWN_GRACE_MS). */
  readonly shutdownGraceMs: number;
  /**
   * API, workers, queues, Redis, embedded parts, then tracing (its last spans exported).
   * Idempotent; every step runs.
   */
  close(): Promise<void>;
}

/** Refused start: Redis may lose jobs and MONEYQ_REQUIRE_SAFE_REDIS is set. */
export class UnsafeRedisError extends MoneyqError {
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

type Cleanup = [string, () => Promise<unknown> | undefined][];

/**
 * The upstream: the provider's address, or (with no PAYMENTS_API_URL) the embedded sandbox,
 * started here unless the process serves the API only.
 */
async function openUpstream(config: Config, role: Role, cleanup: Cleanup) {
  const embedded = embeddedUpstream(config);
  const sandbox = embedded && role !== "api" ? await startEmbeddedSandbox(config) : undefined;
  if (sandbox) cleanup.push(["embedded sandbox", () => sandbox.close()]);
  const upstreamUrl = sandbox?.baseUrl ?? config.paymentsApiUrl ?? "embedded sandbox";
  return { embedded, sandbox, upstreamUrl };
}

/** The role's metrics registry, and the log of repeated errors that counts into it. */
function openRegistry(role: Role, logger: Logger, cleanup: Cleanup) {
  const registry = createMetricsRegistry(role);
  const errors = new RepeatedErrors(logger, { count: countErrors(registry) });
  cleanup.push(["error log", async () => errors.close()]);
  return { registry, errors };
}

/**
 * The API's own clients of the provider: a dead letter's replay asks the provider first, and
 * a dry run reads balances. None for a worker-only process or an upstream not yet known.
 */
function apiLookups(
  role: Role,
  on: {
    config: Config;
    connection: RedisConnection;
    upstreamUrl: string;
    accounts: readonly AccountConfig[];
    adapter: ProviderAdapter | undefined;
  },
) {
  if (role === "worker" || !/^https?:/.test(on.upstreamUrl)) return undefined;
  return openProviderLookups(on.config, on.connection, on.upstreamUrl, on.accounts, on.adapter);
}

/**
 * Composes a moneyq process from configuration. With no PAYMENTS_API_URL it runs the sandbox
 * in-process; with neither PAYMENTS_API_URL nor REDIS_URL and no Redis answering at the default
 * address, it starts a private redis-server. The first log line says which.
 */
export async function startService(options: ServiceOptions): Promise<Service> {
  const { config } = options;
  const role = options.role ?? "all";
  const logger = options.logger ?? createLogger(config.logLevel);
  const cleanup: Cleanup = [];
  const stopAll = () => runAll(logger, cleanup.reverse());
  // Before anything connects: a module that cannot be loaded, or a port in use, is a bad
  // setting like any other.
  const adapter = await openProviderAdapter(config);
  await refuseUnlistenable(config, role, options);
  try {
    // First started, last closed: every other part's spans are exported before it stops.
    const tracing = await startTracing(config, logger);
    cleanup.push(["tracing", () => tracing.close()]);
    const redis = await serviceRedis(config.redisUrl, "redis-server", ...redisWait(config));
    cleanup.push(["private redis-server", () => redis.stop()]);
    const { embedded, sandbox, upstreamUrl } = await openUpstream(config, role, cleanup);
    const accounts = serviceAccounts(config);
    const startupMessage = announce({
      config,
      role,
      logger,
      redis,
      sandbox,
      upstreamUrl,
      embedded,
    });

    const connection = createRedis(redis.url, logger, "main");
    cleanup.push(["redis", () => closeRedis(connection)]);
    await prepareRedis(connection, config, logger, redis.url);

    const { registry, errors } = openRegistry(role, logger, cleanup);
    const lookups = apiLookups(role, { config, connection, upstreamUrl, accounts, adapter });
    if (lookups) cleanup.push(["provider lookups", () => lookups.close()]);
    const balances = lookups && balanceSource(lookups.lookups);
    const parts = openParts(config, connection, tracing.tracer, balances);
    cleanup.push(["producer and queues", () => parts.close()]);
    const queues = parts.queues.byAccount;
    const { producer, results, batches } = parts;
    const sweep = sweepUnsealedBatches(batches, parts.accounts, { logger, errors });
    cleanup.push(["sweep of unsealed batches", () => sweep.close()]);

    const workers =
      role === "api"
        ? undefined
        : await startWorkers({
            ...{ config, paymentsApiUrl: upstreamUrl, accounts, connection, logger, registry },
            ...{ queues: parts.queues, webhookDeliveries: parts.webhooks, errors, adapter },
            tracer: tracing.tracer,
          });
    if (workers) cleanup.push(["workers", () => workers.close()]);
    const metricsServer = await serveMetrics(
      role,
      registry,
      { logger, connection, parts },
      options,
    );
    if (metricsServer) cleanup.push(["metrics server", () => metricsServer.close()]);

    const tokens = config.api.tokens.length === 0 && embedded ? [devToken()] : config.api.tokens;
    let shuttingDown = false;
    const api =
      role === "worker"
        ? undefined
        : await startServiceApi(
            {
              ...parts,
              queues,
              logger,
              errors,
              tokens,
              tracingPlugin: tracing.apiPlugin,
              lookups: lookups?.lookups,
            },
            { registry, workers, apiPort: options.apiPort, isShuttingDown: () => shuttingDown },
          );
    if (api) cleanup.push(["api", () => api.close()]);

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
      shutdownGraceMs: config.pipeline.shutdownGraceMs,
      close() {
        shuttingDown = true;
        // The workers' grace period starts at the signal, alongside the API's close.
        if (closing === undefined) workers?.close();
        closing ??= stopAll();
        return closing;
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * ConfigError naming the variable when this process could not listen where it is configured
 * to: the API's host and port, or a worker-only process's metrics host and port.
 */
async function refuseUnlistenable(config: Config, role: Role, options: ServiceOptions) {
  const [name, host, port] =
    role === "worker"
      ? ([
          "MONEYQ_METRICS",
          config.metrics.host,
          options.metricsPort ?? config.metrics.port,
        ] as const)
      : (["MONEYQ_API", config.api.host, options.apiPort ?? config.api.port] as const);
  const problem = await listenProblem(host, port);
  if (problem)
    throw new ConfigError([
      { variable: `${name}_${problem.part.toUpperCase()}`, rule: problem.rule },
    ]);
}

/** Where the service's Redis comes from, and how long a configured one may take to answer. */
function redisWait(config: Config): [RedisSource, number] {
  return [redisSource(config), config.redisStartTimeoutMs];
}

/** The embedded sandbox speaks the configured profile's dialect, so a profile can be tried locally. */
function startEmbeddedSandbox(config: Config): Promise<RunningSandbox> {
  return startSandbox(
    config.provider === DEFAULT_PROVIDER_PROFILE ? {} : { profile: config.provider },
  );
}

/** The development token may do everything a configured token may: the sandbox moves no money. */
function devToken(): ApiToken {
  const token: Omit<ApiToken, "token"> = {
    name: "dev",
    accounts: Object.freeze([DEFAULT_ACCOUNT_ALIAS]),
    permissions: PERMISSIONS,
  };
  Object.defineProperty(token, "token", { value: EMBEDDED_DEV_TOKEN, enumerable: false });
  return Object.freeze(token as ApiToken);
}

/** Logs the first line: role, and which parts run embedded. Returns its message. */
function announce(parts: {
  readonly config: Config;
  readonly role: Role;
  readonly logger: Logger;
  readonly redis: ServiceRedis;
  readonly sandbox: RunningSandbox | undefined;
  readonly upstreamUrl: string;
  readonly embedded: boolean;
}): string {
  const { config, role, logger, redis, sandbox, upstreamUrl, embedded } = parts;
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
      upstream: embedded ? "embedded sandbox" : redactUrl(upstreamUrl),
      redis: redis.embeddedBecause ? "private redis-server" : redactUrl(redis.url),
    },
    startupMessage,
  );
  return startupMessage;
}

/** Checks that Redis keeps jobs (refusing under MONEYQ_REQUIRE_SAFE_REDIS) and moves batches and pauses stored by earlier releases. */
async function prepareRedis(
  connection: RedisConnection,
  config: Config,
  logger: Logger,
  url: string,
): Promise<void> {
  const safety = await checkRedisSafety(connection);
  for (const warning of safety.warnings) logger.warn({ redis: redactUrl(url) }, warning);
  if (!safety.safe && config.requireSafeRedis) {
    throw new UnsafeRedisError(
      `refusing to start (MONEYQ_REQUIRE_SAFE_REDIS): ${safety.warnings.join("; ")}`,
    );
  }
  const legacy = await migrateLegacyBatchKeys(connection, config.redisPrefix);
  if (legacy.moved > 0)
    logger.info({ moved: legacy.moved }, "moved batches stored before they belonged to an account");
  if (legacy.conflicts.length > 0)
    logger.warn(
      { batchIds: legacy.conflicts },
      "batches stored before they belonged to an account were not moved: their account already has a batch of that id",
    );
  const pauses = await migrateLegacyPauses(connection, config.redisPrefix);
  if (pauses > 0) logger.info({ moved: pauses }, "moved account pauses to their account's key");
}

/** The HTTP API of a service, with its readiness. */
async function startServiceApi(
  parts: Pick<
    ApiDeps,
    | "logger"
    | "tokens"
    | "producer"
    | "batches"
    | "results"
    | "queues"
    | "pauses"
    | "deadLetters"
    | "webhooks"
    | "jobs"
    | "resolutions"
    | "laneHolds"
    | "lookups"
    | "tracingPlugin"
    | "errors"
  > & {
    readonly config: Config;
    readonly connection: RedisConnection;
  },
  runtime: {
    readonly registry: Registry;
    readonly workers: RunningWorkers | undefined;
    readonly apiPort: number | undefined;
    readonly isShuttingDown: () => boolean;
  },
): Promise<RunningApi> {
  const { config, logger, connection, tokens, results } = parts;
  const { workers } = runtime;
  const writes = new RedisWriteCheck(
    connection,
    readyCheckKeys(results.keyspace, [...parts.queues.keys()]),
  );
  if (tokens.length === 0)
    logger.warn(
      "no MONEYQ_API_TOKENS: the API refuses every request but health, readiness and metrics",
    );
  const api = await startApi(
    {
      tokens,
      producer: parts.producer,
      batches: parts.batches,
      results,
      queues: parts.queues,
      pauses: parts.pauses,
      deadLetters: parts.deadLetters,
      webhooks: parts.webhooks,
      jobs: parts.jobs,
      resolutions: parts.resolutions,
      laneHolds: parts.laneHolds,
      lookups: parts.lookups,
      tracingPlugin: parts.tracingPlugin,
      registry: runtime.registry,
      logger,
      errors: parts.errors,
      bodyLimitBytes: config.api.bodyLimitBytes,
      timeouts: {
        requestMs: config.api.requestTimeoutMs,
        headersMs: config.api.headersTimeoutMs,
        idleMs: config.api.idleTimeoutMs,
      },
      readiness: async () => {
        const written = await writes.check();
        return {
          redis: written.ok,
          ...(!written.ok && { redisProblem: written.code }),
          workers: workers ? workers.isRunning() : undefined,
          shuttingDown: runtime.isShuttingDown(),
        };
      },
      redisStatus: () => connection.status,
    },
    { host: config.api.host, port: runtime.apiPort ?? config.api.port },
  );
  logger.info({ api: api.url }, `API listening on ${api.url} (metrics at ${api.url}/metrics)`);
  return api;
}

/**
 * The readings of Redis every process reports, and a worker-only process's metrics server (one
 * with the API serves /metrics there).
 */
async function serveMetrics(
  role: Role,
  registry: Registry,
  on: {
    readonly logger: Logger;
    readonly connection: RedisConnection;
    readonly parts: SharedParts;
  },
  options: ServiceOptions,
): Promise<RunningMetricsServer | undefined> {
  const { config } = options;
  const queues = on.parts.queues.byAccount;
  const accounts = new MetricAccounts([...queues.keys()], config.metrics.accounts);
  if (config.metrics.accounts !== "all")
    on.logger.info(
      { named: config.metrics.accounts.length, accounts: queues.size },
      'metrics: only the accounts MONEYQ_METRICS_ACCOUNTS names have series of their own; the others count under account="_other"',
    );
  registerRedisMetrics(registry, {
    connection: on.connection,
    prefix: config.redisPrefix,
    queues,
    accounts,
    pauses: on.parts.pauses,
    resultsStreams: on.parts.results.streamKeys([...queues.keys()]),
    cacheMs: config.metrics.cacheMs,
  });
  registerReconciliationMetrics(registry, {
    connection: on.connection,
    prefix: config.redisPrefix,
    accounts,
    aliases: [...queues.keys()],
  });
  if (role !== "worker") return undefined;
  return startWorkerMetrics(registry, config, on.logger, options.metricsPort);
}

/** The metrics port of a worker-only process (one with the API serves /metrics there). */
async function startWorkerMetrics(
  registry: Registry,
  config: Config,
  logger: Logger,
  port: number | undefined,
): Promise<RunningMetricsServer> {
  const running = await startMetricsServer({
    registry,
    host: config.metrics.host,
    port: port ?? config.metrics.port,
  });
  logger.info({ metrics: running.url }, `metrics at ${running.url}/metrics`);
  return running;
}

/** How long after the grace period a stop may take before the process exits regardless. */
export const SHUTDOWN_BOUND_MS = 5_000;

/**
 * On SIGTERM or SIGINT: close, then exit 0 (1 if closing failed). Closing that takes longer
 * than the grace period plus SHUTDOWN_BOUND_MS (a request or a Redis call that hangs) ends
 * the process with 1; a second signal ends it at once.
 */
export function closeOnSignals(
  service: { close(): Promise<void>; readonly shutdownGraceMs?: number },
  logger: Logger,
  graceMs: number = service.shutdownGraceMs ?? CONFIG_DEFAULTS.MONEYQ_SHUTDOWN_GRACE_MS,
): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, "shutting down");
    setTimeout(() => {
      logger.error(
        { boundMs: graceMs + SHUTDOWN_BOUND_MS },
        "shutdown did not finish in time: exiting",
      );
      process.exit(1);
    }, graceMs + SHUTDOWN_BOUND_MS).unref();
    service.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}
