// Every default of the configuration, in one table: docs/configuration.md lists the same.
import { CLIENT_DEFAULTS } from "../client/options.js";
import type { LogLevel, TraceProtocol, TraceSamplerName } from "./choices.js";

/**
 * Every default in one place (a value another table owns is taken from it, never written
 * again: test/habits/defaults.test.ts); docs/configuration.md lists the same.
 */
export const CONFIG_DEFAULTS = Object.freeze({
  REDIS_URL: "redis://127.0.0.1:6379",
  MONEYQ_RATE_LIMIT_PER_SECOND: 50,
  MONEYQ_CONCURRENCY: 16,
  MONEYQ_MAX_JOBS_IN_PROGRESS: 1_024,
  MONEYQ_MAX_ACTIVE_ACCOUNTS: 256,
  // The client's own: a process given no setting calls the provider as the client would.
  MONEYQ_CONNECT_TIMEOUT_MS: CLIENT_DEFAULTS.connectTimeoutMs,
  MONEYQ_REQUEST_TIMEOUT_MS: CLIENT_DEFAULTS.requestTimeoutMs,
  MONEYQ_LOG_LEVEL: "info" as LogLevel,
  MONEYQ_REDIS_PREFIX: "moneyq",
  MONEYQ_MAX_ATTEMPTS: 8,
  MONEYQ_CONFIRM_DEADLINE_MS: 15 * 60_000,
  MONEYQ_CONFIRM_FIRST_DELAY_MS: 200,
  MONEYQ_RESULTS_MAXLEN: 100_000,
  MONEYQ_RETENTION_MS: 7 * 24 * 3_600_000,
  MONEYQ_RATE_WINDOW_MARGIN_MS: 40,
  MONEYQ_LOCK_DURATION_MS: 30_000,
  MONEYQ_STALLED_INTERVAL_MS: 30_000,
  MONEYQ_SHUTDOWN_GRACE_MS: 10_000,
  MONEYQ_RECHECK_AFTER: "1h,24h,72h",
  MONEYQ_REDIS_START_TIMEOUT_MS: 10_000,
  MONEYQ_API_HOST: "127.0.0.1",
  MONEYQ_API_PORT: 8080,
  MONEYQ_API_BODY_LIMIT_BYTES: 64 * 1024 * 1024,
  MONEYQ_API_REQUEST_TIMEOUT_MS: 120_000,
  MONEYQ_API_HEADERS_TIMEOUT_MS: 10_000,
  MONEYQ_API_IDLE_TIMEOUT_MS: 120_000,
  MONEYQ_METRICS_HOST: "127.0.0.1",
  MONEYQ_METRICS_PORT: 9464,
  MONEYQ_METRICS_CACHE_MS: 2_000,
  OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf" as TraceProtocol,
  OTEL_SERVICE_NAME: "moneyq",
  OTEL_TRACES_SAMPLER: "parentbased_always_on" as TraceSamplerName,
  OTEL_TRACES_SAMPLER_ARG: 1,
});
