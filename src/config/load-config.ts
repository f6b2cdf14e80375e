// The configuration, read once from the environment: every part composed, validated, frozen.
import { isClusterUrl } from "../net/redis-url.js";
import type { ProviderProfile } from "../provider/profile.js";
import { type AccountConfig, aliasesWithPolicies, readAllAccounts } from "./accounts.js";
import { type ApiConfig, readApi } from "./api.js";
import { type ApprovalPolicy, readApprovals } from "./approvals.js";
import { readBasics } from "./basics.js";
import { type BooksConfig, readBooks } from "./books.js";
import type { LogLevel } from "./choices.js";
import { ConfigError, type Env, EnvReader } from "./env-reader.js";
import { type MetricsConfig, readMetricsAccounts } from "./metrics.js";
import { type OutflowConfig, readOutflow } from "./outflow.js";
import { type PaymentRepeatsPolicy, readPaymentRepeats } from "./payment-repeats.js";
import { type PipelineConfig, readPipeline } from "./pipeline.js";
import { type ProviderSandboxConfig, readProviderSandbox } from "./provider.js";
import { wholeNumber } from "./rules.js";
import { readTracing, type TracingConfig } from "./tracing.js";
import { checkVariableNames } from "./variables.js";
import { readWebhook, type WebhookConfig } from "./webhooks.js";

export interface Config {
  readonly redisUrl: string;
  /** REDIS_URL was set: that Redis must answer, and no private redis-server stands in for it. */
  readonly redisUrlSet: boolean;
  /** The provider's base address; undefined means "run the embedded sandbox". */
  readonly paymentsApiUrl: string | undefined;
  /** How the provider shapes what the spec leaves unshown (docs/provider-profile.md). */
  readonly provider: ProviderProfile;
  /**
   * MONEYQ_PROVIDER_ADAPTER: the file of an ES module for what the profile cannot say, imported
   * by the service and the CLI before they connect (provider/load-adapter.ts).
   */
  readonly providerAdapter: string | undefined;
  /** The provider's sandbox environment, where `moneyq provider check --submit` sends. */
  readonly providerSandbox: ProviderSandboxConfig | undefined;
  readonly accounts: readonly AccountConfig[];
  readonly http: { readonly connectTimeoutMs: number; readonly requestTimeoutMs: number };
  readonly logLevel: LogLevel;
  /** Prefix of every Redis key moneyq writes. */
  readonly redisPrefix: string;
  readonly pipeline: PipelineConfig;
  /** What moneyq keeps watching after a result: re-checks and the reconciliation sweep. */
  readonly books: BooksConfig;
  /** Refuse to start when Redis may evict or lose jobs. */
  readonly requireSafeRedis: boolean;
  /** How long a start waits for a configured Redis that refuses, times out or is loading. */
  readonly redisStartTimeoutMs: number;
  /** Signed result webhooks; undefined when no URL is configured. */
  readonly webhook: WebhookConfig | undefined;
  /** Rate and concurrency of an account configured without its own (and of the embedded one). */
  readonly accountDefaults: { readonly ratePerSecond: number; readonly concurrency: number };
  readonly api: ApiConfig;
  readonly metrics: MetricsConfig;
  /** Each account's approval policy, by alias; an account without one needs no approval. */
  readonly approvals: ReadonlyMap<string, ApprovalPolicy>;
  /** Velocity limits and insufficient funds holds (docs/safety.md). */
  readonly outflow: OutflowConfig;
  /**
   * Each listed account's policy on repeated payments (docs/safety.md); an account not listed
   * has DEFAULT_PAYMENT_REPEATS.
   */
  readonly paymentRepeats: ReadonlyMap<string, PaymentRepeatsPolicy>;
  /** OpenTelemetry traces of every job; undefined (nothing of OpenTelemetry loaded) when off. */
  readonly tracing: TracingConfig | undefined;
}

/**
 * Reads configuration from `env` (default: the process environment) once, and returns it
 * validated and frozen. Throws ConfigError listing every problem, in the order of the steps.
 */
export function loadConfig(env: Env = process.env): Config {
  const read = new EnvReader(env);
  checkVariableNames(read);
  const basics = readBasics(read);
  if (isClusterUrl(basics.redisUrl) && /[{}]/.test(basics.redisPrefix)) {
    read.issues.push({
      variable: "MONEYQ_REDIS_PREFIX",
      rule: "must have no { or } on a Redis Cluster: moneyq gives each account's keys a hash tag of its own (docs/scaling.md)",
    });
  }
  const pipeline = readPipeline(read);
  const books = readBooks(read);
  const requireSafeRedis = read.isOn("MONEYQ_REQUIRE_SAFE_REDIS");
  const redisStartTimeoutMs = read.int("MONEYQ_REDIS_START_TIMEOUT_MS", wholeNumber);
  const webhook = readWebhook(read);
  const accounts = readAllAccounts(read, basics);
  const api = readApi(read, basics.paymentsApiUrl, accounts);
  const aliases = aliasesWithPolicies(basics, accounts);
  const approvals = readApprovals(read, aliases);
  const outflow = readOutflow(read, aliases);
  const paymentRepeats = readPaymentRepeats(read, aliases);
  const metrics: MetricsConfig = Object.freeze({
    host: read.host("MONEYQ_METRICS_HOST"),
    port: read.port("MONEYQ_METRICS_PORT"),
    cacheMs: read.int("MONEYQ_METRICS_CACHE_MS", wholeNumber),
    accounts: readMetricsAccounts(read, aliases),
  });
  const tracing = readTracing(read);
  const providerSandbox = readProviderSandbox(read, basics.paymentsApiUrl, accounts);
  if (read.issues.length > 0) throw new ConfigError(read.issues);

  return Object.freeze({
    redisUrl: basics.redisUrl,
    redisUrlSet: read.text("REDIS_URL") !== undefined,
    paymentsApiUrl: basics.paymentsApiUrl,
    provider: basics.provider,
    providerAdapter: basics.providerAdapter,
    providerSandbox,
    accounts: Object.freeze(accounts),
    http: Object.freeze({
      connectTimeoutMs: basics.connectTimeoutMs,
      requestTimeoutMs: basics.requestTimeoutMs,
    }),
    logLevel: basics.logLevel,
    redisPrefix: basics.redisPrefix,
    pipeline,
    books,
    requireSafeRedis,
    redisStartTimeoutMs,
    webhook,
    accountDefaults: Object.freeze({ ratePerSecond: basics.rate, concurrency: basics.concurrency }),
    api,
    metrics,
    approvals,
    outflow,
    paymentRepeats,
    tracing,
  });
}

export {
  type AccountConfig,
  account,
  DEFAULT_ACCOUNT_ALIAS,
  namedOrOnlyAccount,
} from "./accounts.js";
export { type ApiConfig, type ApiToken, PERMISSIONS, type Permission } from "./api.js";
export type { ApprovalPolicy } from "./approvals.js";
export { embeddedUpstream } from "./basics.js";
export type { BooksConfig } from "./books.js";
export {
  LOG_LEVELS,
  type LogLevel,
  TRACE_PROTOCOLS,
  TRACE_SAMPLERS,
  type TraceProtocol,
  type TraceSamplerName,
} from "./choices.js";
export { CONFIG_DEFAULTS } from "./defaults.js";
export { ConfigError, type ConfigIssue } from "./env-reader.js";
export { METRICS_ACCOUNTS_UNSET_UP_TO, type MetricsConfig } from "./metrics.js";
export type { CurrencyLimits, OutflowConfig, VelocityLimit, VelocityLimits } from "./outflow.js";
export {
  DEFAULT_PAYMENT_REPEATS,
  type PaymentRepeatsPolicy,
  paymentRepeatsOf,
  REPEAT_POLICIES,
  type RepeatPolicy,
} from "./payment-repeats.js";
export type { PipelineConfig } from "./pipeline.js";
export type { ProviderSandboxConfig } from "./provider.js";
export type { TracingConfig } from "./tracing.js";
export { KNOWN_VARIABLES } from "./variables.js";
export type { WebhookConfig } from "./webhooks.js";
