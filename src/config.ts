import { statSync } from "node:fs";
import ipaddr from "ipaddr.js";
import { z } from "zod";
import { readBoundedFile } from "./bounded-file.js";
import { CLIENT_DEFAULTS } from "./client/options.js";
import { toFieldIssues } from "./contract/field-issues.js";
import { MoneyqError } from "./errors/moneyq-error.js";
import { allowedRangeProblem, blockedWebhookHost } from "./net/address-guard.js";
import { isClusterUrl, parseClusterUrl } from "./net/redis-url.js";
import { loadProviderProfile } from "./provider/load-profile.js";
import { DEFAULT_PROVIDER_PROFILE, type ProviderProfile } from "./provider/profile.js";

/** One upstream business account, known to moneyq by its alias. */
export interface AccountConfig {
  readonly alias: string;
  /** Non-enumerable: JSON.stringify, loggers and inspectors of the config never see it. */
  readonly apiKey: string;
  /** Requests per second this account may send, across every worker process. */
  readonly ratePerSecond: number;
  /** Jobs of this account processed at once by one worker process. */
  readonly concurrency: number;
}

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

/** At most this amount (as decimal text) and this many payouts in a velocity limit's window. */
export interface VelocityLimit {
  readonly amount?: string;
  readonly count?: number;
}

/** One currency's velocity limits on an account (docs/safety.md). */
export interface CurrencyLimits {
  readonly perHour?: VelocityLimit | undefined;
  readonly perDay?: VelocityLimit | undefined;
  readonly perBeneficiaryPerDay?: VelocityLimit | undefined;
}

/** Each account's velocity limits, by currency. */
export type VelocityLimits = ReadonlyMap<string, ReadonlyMap<string, CurrencyLimits>>;

/** Outflow safety (docs/safety.md). */
export interface OutflowConfig {
  /** Each account's velocity limits, by currency; none by default. */
  readonly velocity: VelocityLimits;
  /**
   * A payout refused for insufficient funds holds its currency's lane (`hold`, the default) or
   * ends `failed` (`fail`).
   */
  readonly fundsHold: boolean;
  /**
   * How long a currency's lane held for insufficient funds waits before it tries again by
   * itself (ms); undefined: until an operator resumes it.
   */
  readonly fundsRetryMs: number | undefined;
}

/** Books after success (docs/reconciliation.md). */
export interface BooksConfig {
  /** When a succeeded payout is looked up again, after its success (ms, rising); empty: never. */
  readonly recheckAfterMs: readonly number[];
  /** How often the service sweeps each account's provider transactions; undefined: never. */
  readonly reconcileEveryMs: number | undefined;
}

/** The provider's sandbox environment (spec 5: its own address and key, never production's). */
export interface ProviderSandboxConfig {
  readonly url: string;
  /** Non-enumerable, like API keys. */
  readonly apiKey: string;
}

export const TRACE_PROTOCOLS = ["http/protobuf", "http/json"] as const;
export type TraceProtocol = (typeof TRACE_PROTOCOLS)[number];

/** The samplers of the OpenTelemetry environment specification that moneyq offers. */
export const TRACE_SAMPLERS = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const;
export type TraceSamplerName = (typeof TRACE_SAMPLERS)[number];

/**
 * Where and how spans are exported, from the standard OTEL_* variables (docs/configuration.md,
 * "Traces"). Tracing is on when an OTLP endpoint is set and OTEL_SDK_DISABLED is not true.
 */
export interface TracingConfig {
  /** The URL spans are POSTed to (OTLP over HTTP). */
  readonly endpoint: string;
  readonly protocol: TraceProtocol;
  /** Non-enumerable, like API keys: they may hold the tracing backend's key. */
  readonly headers: Readonly<Record<string, string>>;
  readonly serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES: what the operator says of this process (environment, region). */
  readonly resourceAttributes: Readonly<Record<string, string>>;
  readonly sampler: TraceSamplerName;
  /** The share of traces a *traceidratio sampler keeps, 0 to 1. */
  readonly samplerRatio: number;
}

/** Which batches of an account wait for a second person's approval before anything is sent. */
export interface ApprovalPolicy {
  /** Every batch. */
  readonly allBatches: boolean;
  /** A batch whose requested total in a currency is over that currency's amount (decimal text). */
  readonly batchesOver: Readonly<Record<string, string>>;
  /** A job enqueued alone whose amount in its currency is over that currency's amount. */
  readonly jobsOver: Readonly<Record<string, string>>;
  /** Work not decided this long after submission is cancelled; undefined: it waits. */
  readonly expiresAfterMs: number | undefined;
  /** A job resolved by hand needs a second person's approval (docs/reconciliation.md). */
  readonly resolutionsBySecondPerson?: boolean;
}

/** What happens to a payment that repeats one paid or queued in the window (docs/safety.md). */
export const REPEAT_POLICIES = ["warn", "hold", "refuse"] as const;
export type RepeatPolicy = (typeof REPEAT_POLICIES)[number];

/** An account's policy on repeated payments: what a repeat does, and how far back one is looked for. */
export interface PaymentRepeatsPolicy {
  readonly policy: RepeatPolicy;
  /** How long a payment is remembered after it was enqueued (ms). */
  readonly windowMs: number;
}

const DAY_MS = 24 * 3_600_000;

/** An account not listed in MONEYQ_PAYMENT_REPEATS: repeats are reported, over 7 days. */
export const DEFAULT_PAYMENT_REPEATS: PaymentRepeatsPolicy = Object.freeze({
  policy: "warn",
  windowMs: 7 * DAY_MS,
});

/** The policy on repeated payments of `account`: its own, or the default. */
export function paymentRepeatsOf(
  policies: ReadonlyMap<string, PaymentRepeatsPolicy> | undefined,
  account: string,
): PaymentRepeatsPolicy {
  return policies?.get(account) ?? DEFAULT_PAYMENT_REPEATS;
}

export interface MetricsConfig {
  /** Where a worker-only process serves /metrics (API processes serve it on the API). */
  readonly host: string;
  readonly port: number;
  /** How long a scrape's Redis readings (queue depth, backlog) are reused. */
  readonly cacheMs: number;
  /**
   * The accounts with series of their own (MONEYQ_METRICS_ACCOUNTS); the rest are counted
   * under `account="_other"` (metrics/metric-accounts.ts).
   */
  readonly accounts: "all" | readonly string[];
}

/**
 * With MONEYQ_METRICS_ACCOUNTS unset, every account has series of its own up to this many
 * accounts (about 80 series each); past it, none has, so /metrics stays small.
 */
export const METRICS_ACCOUNTS_UNSET_UP_TO = 50;

export interface ApiConfig {
  readonly host: string;
  readonly port: number;
  /** Largest request body (a batch upload), in bytes. */
  readonly bodyLimitBytes: number;
  /** Time for a whole request (headers and body) to arrive; then 408 and the connection closes. */
  readonly requestTimeoutMs: number;
  /** Time for a request's headers to arrive. */
  readonly headersTimeoutMs: number;
  /** A connection with no traffic either way for this long is closed. */
  readonly idleTimeoutMs: number;
  /** Bearer tokens; empty means every request is refused (but the embedded-sandbox dev token). */
  readonly tokens: readonly ApiToken[];
}

/**
 * What a token may do on its accounts: enqueue jobs and submit batches; approve or reject
 * work awaiting approval; operate (cancel, replay, pause and resume, webhook redelivery and
 * resume); read (every GET under /v1). Split so that who submits is not who approves.
 */
export const PERMISSIONS = Object.freeze(["submit", "approve", "operate", "read"] as const);
export type Permission = (typeof PERMISSIONS)[number];

/** A bearer token of the HTTP API, the accounts it may use and what it may do on them. */
export interface ApiToken {
  /** Names the token in logs; never the token itself. */
  readonly name: string;
  /** Non-enumerable, like API keys. */
  readonly token: string;
  readonly accounts: readonly string[];
  /** Every permission when the entry names none, so tokens configured before them keep working. */
  readonly permissions: readonly Permission[];
}

export interface PipelineConfig {
  /** Submissions of one job before its outcome is looked up. */
  readonly maxAttempts: number;
  /** How long a PENDING outcome is confirmed before it needs reconciliation. */
  readonly confirmDeadlineMs: number;
  /** The first lookup after a PENDING answer waits this long; each next one twice as long. */
  readonly confirmFirstDelayMs: number;
  /** Approximate length the results stream is trimmed to. */
  readonly resultsMaxLen: number;
  /** How long results, and finished jobs, are kept. */
  readonly retentionMs: number;
  /** Each second of an account's rate is stretched by this much, for jitter between a slot and arrival. */
  readonly rateWindowMarginMs: number;
  /** A worker's lock on an active job; a dead worker's jobs are recovered after it. */
  readonly lockDurationMs: number;
  /** How often workers look for jobs whose worker died. */
  readonly stalledIntervalMs: number;
  /** How long shutdown waits for active jobs before handing them back. */
  readonly shutdownGraceMs: number;
  /**
   * Jobs in progress in one process across its accounts, shared among the busy ones (never
   * under one each): processors/in-progress-budget.ts.
   */
  readonly maxJobsInProgress: number;
  /**
   * Accounts one process runs a worker for at once: only accounts with work get one
   * (processors/account-turns.ts), so this bounds the process's Redis connections.
   */
  readonly maxActiveAccounts: number;
}

export interface WebhookConfig {
  readonly url: string;
  /**
   * Every deliveries' signing secret, in the order configured (several while rotating);
   * non-enumerable, like API keys.
   */
  readonly secrets: readonly string[];
  /**
   * CIDR ranges a webhook may reach although they are not public unicast (loopback, private,
   * link-local...): MONEYQ_WEBHOOK_ALLOW_PRIVATE, for local development. Empty by default.
   */
  readonly allowedRanges: readonly string[];
}

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

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

/** Alias of the account configured by PAYMENTS_API_KEY. */
export const DEFAULT_ACCOUNT_ALIAS = "default";

/** No PAYMENTS_API_URL: the upstream is the embedded sandbox, and no real money moves. */
export function embeddedUpstream(config: Pick<Config, "paymentsApiUrl">): boolean {
  return config.paymentsApiUrl === undefined;
}

/**
 * The account an operation acts on: `named` when it is one of `accounts`, the only one when
 * none is named; undefined when `named` is not among them or several could be meant.
 */
export function namedOrOnlyAccount(
  accounts: readonly string[],
  named: string | undefined,
): string | undefined {
  if (named === undefined) return accounts.length === 1 ? accounts[0] : undefined;
  return accounts.includes(named) ? named : undefined;
}

/** Every variable moneyq reads; any other `MONEYQ_*` variable is a typo and fails start. */
export const KNOWN_VARIABLES = [
  "REDIS_URL",
  "PAYMENTS_API_URL",
  "PAYMENTS_API_KEY",
  "MONEYQ_PROVIDER_PROFILE",
  "MONEYQ_PROVIDER_ADAPTER",
  "PAYMENTS_SANDBOX_API_URL",
  "PAYMENTS_SANDBOX_API_KEY",
  "MONEYQ_ACCOUNTS",
  "MONEYQ_ACCOUNTS_FILE",
  "MONEYQ_ACCOUNT_KEYS_FILE",
  "MONEYQ_RATE_LIMIT_PER_SECOND",
  "MONEYQ_CONCURRENCY",
  "MONEYQ_CONNECT_TIMEOUT_MS",
  "MONEYQ_REQUEST_TIMEOUT_MS",
  "MONEYQ_LOG_LEVEL",
  "MONEYQ_REDIS_PREFIX",
  "MONEYQ_MAX_ATTEMPTS",
  "MONEYQ_CONFIRM_DEADLINE_MS",
  "MONEYQ_CONFIRM_FIRST_DELAY_MS",
  "MONEYQ_RESULTS_MAXLEN",
  "MONEYQ_RETENTION_MS",
  "MONEYQ_RATE_WINDOW_MARGIN_MS",
  "MONEYQ_LOCK_DURATION_MS",
  "MONEYQ_STALLED_INTERVAL_MS",
  "MONEYQ_SHUTDOWN_GRACE_MS",
  "MONEYQ_RECHECK_AFTER",
  "MONEYQ_RECONCILE_EVERY",
  "MONEYQ_REQUIRE_SAFE_REDIS",
  "MONEYQ_REDIS_START_TIMEOUT_MS",
  "MONEYQ_WEBHOOK_URL",
  "MONEYQ_WEBHOOK_SECRET",
  "MONEYQ_WEBHOOK_ALLOW_PRIVATE",
  "MONEYQ_API_HOST",
  "MONEYQ_API_PORT",
  "MONEYQ_API_BODY_LIMIT_BYTES",
  "MONEYQ_API_REQUEST_TIMEOUT_MS",
  "MONEYQ_API_HEADERS_TIMEOUT_MS",
  "MONEYQ_API_IDLE_TIMEOUT_MS",
  "MONEYQ_API_TOKENS",
  "MONEYQ_APPROVAL_POLICIES",
  "MONEYQ_VELOCITY_LIMITS",
  "MONEYQ_INSUFFICIENT_FUNDS",
  "MONEYQ_INSUFFICIENT_FUNDS_RETRY",
  "MONEYQ_PAYMENT_REPEATS",
  "MONEYQ_METRICS_HOST",
  "MONEYQ_METRICS_PORT",
  "MONEYQ_METRICS_CACHE_MS",
  "MONEYQ_METRICS_ACCOUNTS",
  "MONEYQ_MAX_JOBS_IN_PROGRESS",
  "MONEYQ_MAX_ACTIVE_ACCOUNTS",
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  "OTEL_EXPORTER_OTLP_HEADERS",
  "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
  "OTEL_EXPORTER_OTLP_PROTOCOL",
  "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
  "OTEL_SERVICE_NAME",
  "OTEL_RESOURCE_ATTRIBUTES",
  "OTEL_TRACES_SAMPLER",
  "OTEL_TRACES_SAMPLER_ARG",
  "OTEL_SDK_DISABLED",
] as const;

export interface ConfigIssue {
  readonly variable: string;
  readonly rule: string;
}

/** Start-up refused: names each variable and its rule, never a value. */
export class ConfigError extends MoneyqError {
  readonly code = "config_invalid";
  readonly issues: readonly ConfigIssue[];
  constructor(issues: readonly ConfigIssue[]) {
    super(`Invalid configuration:\n${issues.map((i) => `  ${i.variable}: ${i.rule}`).join("\n")}`);
    this.name = "ConfigError";
    this.issues = issues;
  }
}

/** Secrets configured at once: a rotation needs two; more is a mistake to show. */
const MAX_WEBHOOK_SECRETS = 5;

/** A string rule whose message is kept word for word (a refinement, not a bare pattern). */
function matching(pattern: RegExp, message: string) {
  return z.string().refine((v) => pattern.test(v), { message });
}

// The spec sets no format for a key: anything every HTTP stack carries unchanged in a header as
// one token. A provider profile's apiKeyPattern can narrow it further, never widen it.
const API_KEY_RULE = "must be visible ASCII characters (0x21 to 0x7E), with no spaces";
const apiKey = matching(/^[\x21-\x7e]+$/, API_KEY_RULE);
const redisUrl = z.string().superRefine((v, ctx) => {
  if (!isClusterUrl(v)) {
    if (!/^rediss?:\/\/\S+$/.test(v))
      ctx.addIssue({
        code: "custom",
        message: "must be a redis:// or rediss:// URL, or redis+cluster:// for a Redis Cluster",
      });
    return;
  }
  const target = parseClusterUrl(v);
  if (typeof target === "string") ctx.addIssue({ code: "custom", message: target });
});
const positiveInt = matching(/^[1-9]\d*$/, "must be a positive whole number");
const wholeNumber = matching(/^\d+$/, "must be a whole number");
const flag = z.string().refine((v) => ["0", "1", "true", "false"].includes(v), {
  message: "must be 1, 0, true or false",
});
const alias = matching(
  /^[a-z][a-z0-9_-]{0,31}$/,
  "must be 1 to 32 lowercase letters, digits, '-' or '_', starting with a letter",
);

const AccountEntry = z
  .strictObject({
    alias,
    apiKey: apiKey.optional(),
    apiKeyEnv: matching(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be a variable name").optional(),
    apiKeyRef: matching(
      /^[A-Za-z0-9_.:-]{1,128}$/,
      "must be a name of 1 to 128 letters, digits, '.', ':', '_' or '-'",
    ).optional(),
    ratePerSecond: z.int().min(1).max(100_000).optional(),
    concurrency: z.int().min(1).max(1_000).optional(),
  })
  .refine((a) => [a.apiKey, a.apiKeyEnv, a.apiKeyRef].filter((k) => k !== undefined).length === 1, {
    message: "give exactly one of apiKey, apiKeyEnv or apiKeyRef",
  });

/**
 * Largest MONEYQ_ACCOUNTS_FILE or MONEYQ_ACCOUNT_KEYS_FILE read: some 300,000 accounts, far
 * beyond any real list, and still a bounded read at start.
 */
const MAX_ACCOUNT_FILE_MIB = 32;

type Env = Readonly<Record<string, string | undefined>>;

/** Reads variables of one environment, collecting every problem instead of stopping at the first. */
class EnvReader {
  readonly env: Env;
  readonly issues: ConfigIssue[] = [];

  constructor(env: Env) {
    this.env = env;
  }

  /** The variable's value; unset and empty are the same. */
  text(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value === "" ? undefined : value;
  }

  /** The variable's value if `schema` accepts it; otherwise an issue per rule, and `fallback`. */
  check<T>(name: string, schema: z.ZodType<T>, fallback: T): T {
    const value = this.text(name);
    if (value === undefined) return fallback;
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    for (const i of toFieldIssues(parsed.error.issues, value))
      this.issues.push({ variable: name, rule: i.rule });
    return fallback;
  }

  int(name: keyof typeof CONFIG_DEFAULTS, schema = positiveInt): number {
    return Number(this.check(name, schema, String(CONFIG_DEFAULTS[name])));
  }

  isOn(name: string): boolean {
    return ["1", "true"].includes(this.check(name, flag, "0"));
  }

  host(name: "MONEYQ_API_HOST" | "MONEYQ_METRICS_HOST"): string {
    return this.check(
      name,
      matching(/^[A-Za-z0-9.:-]{1,255}$/, "must be a host name or IP address"),
      CONFIG_DEFAULTS[name],
    );
  }

  port(name: "MONEYQ_API_PORT" | "MONEYQ_METRICS_PORT"): number {
    return Number(
      this.check(
        name,
        matching(/^\d{1,5}$/, "must be a port number, 0 to 65535").refine(
          (v) => Number(v) <= 65_535,
          { message: "must be a port number, 0 to 65535" },
        ),
        String(CONFIG_DEFAULTS[name]),
      ),
    );
  }
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

/** The accounts a policy may name: the configured ones, or the embedded sandbox's. */
function aliasesWithPolicies(
  basics: { readonly paymentsApiUrl: string | undefined },
  accounts: readonly AccountConfig[],
): string[] {
  return embeddedUpstream({ paymentsApiUrl: basics.paymentsApiUrl })
    ? [DEFAULT_ACCOUNT_ALIAS]
    : accounts.map((a) => a.alias);
}

/** MONEYQ_METRICS_ACCOUNTS: `all`, or aliases separated by commas, each configured. */
function readMetricsAccounts(
  read: EnvReader,
  aliases: readonly string[],
): "all" | readonly string[] {
  const variable = "MONEYQ_METRICS_ACCOUNTS";
  const listed = read.text(variable)?.trim();
  if (listed === undefined) return aliases.length <= METRICS_ACCOUNTS_UNSET_UP_TO ? "all" : [];
  if (listed === "all") return "all";
  const named = listed.split(",").map((a) => a.trim());
  const known = new Set(aliases);
  for (const a of named) {
    if (!known.has(a))
      read.issues.push({
        variable,
        rule: `${JSON.stringify(a.slice(0, 40))} is not a configured account: give "all" or configured aliases separated by commas`,
      });
  }
  return Object.freeze([...new Set(named)]);
}

/** Any other `MONEYQ_*` variable is a typo, and fails start. */
function checkVariableNames(read: EnvReader): void {
  for (const name of Object.keys(read.env)) {
    if (name.startsWith("MONEYQ_") && !(KNOWN_VARIABLES as readonly string[]).includes(name)) {
      read.issues.push({
        variable: name,
        rule: "unknown variable (see docs/configuration.md)",
      });
    }
  }
}

/** Redis, the provider and its default account, HTTP timeouts, logging. */
function readBasics(read: EnvReader) {
  return {
    redisUrl: read.check("REDIS_URL", redisUrl, CONFIG_DEFAULTS.REDIS_URL),
    paymentsApiUrl: read.check("PAYMENTS_API_URL", providerUrl, undefined),
    defaultKey: read.check("PAYMENTS_API_KEY", apiKey, undefined),
    provider: readProfile(read.text("MONEYQ_PROVIDER_PROFILE"), read.issues),
    providerAdapter: read.check("MONEYQ_PROVIDER_ADAPTER", moduleFile, undefined),
    rate: read.int("MONEYQ_RATE_LIMIT_PER_SECOND"),
    concurrency: read.int("MONEYQ_CONCURRENCY"),
    connectTimeoutMs: read.int("MONEYQ_CONNECT_TIMEOUT_MS"),
    requestTimeoutMs: read.int("MONEYQ_REQUEST_TIMEOUT_MS"),
    logLevel: read.check(
      "MONEYQ_LOG_LEVEL",
      z.string().refine((v): v is LogLevel => (LOG_LEVELS as readonly string[]).includes(v), {
        message: `must be one of ${LOG_LEVELS.join(", ")}`,
      }),
      CONFIG_DEFAULTS.MONEYQ_LOG_LEVEL,
    ),
    redisPrefix: read.check(
      "MONEYQ_REDIS_PREFIX",
      matching(/^[A-Za-z0-9:_{}-]{1,64}$/, "must be 1 to 64 letters, digits or : _ - { }"),
      CONFIG_DEFAULTS.MONEYQ_REDIS_PREFIX,
    ),
  };
}

type Basics = ReturnType<typeof readBasics>;

function readPipeline(read: EnvReader): PipelineConfig {
  return Object.freeze({
    maxAttempts: read.int("MONEYQ_MAX_ATTEMPTS"),
    confirmDeadlineMs: read.int("MONEYQ_CONFIRM_DEADLINE_MS"),
    confirmFirstDelayMs: read.int("MONEYQ_CONFIRM_FIRST_DELAY_MS"),
    resultsMaxLen: read.int("MONEYQ_RESULTS_MAXLEN"),
    retentionMs: read.int("MONEYQ_RETENTION_MS"),
    rateWindowMarginMs: read.int("MONEYQ_RATE_WINDOW_MARGIN_MS", wholeNumber),
    lockDurationMs: read.int("MONEYQ_LOCK_DURATION_MS"),
    stalledIntervalMs: read.int("MONEYQ_STALLED_INTERVAL_MS"),
    shutdownGraceMs: read.int("MONEYQ_SHUTDOWN_GRACE_MS", wholeNumber),
    maxJobsInProgress: read.int("MONEYQ_MAX_JOBS_IN_PROGRESS"),
    maxActiveAccounts: read.int("MONEYQ_MAX_ACTIVE_ACCOUNTS"),
  });
}

const DURATION_UNITS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};
/** A duration such as `90s`, `1h` or `3d`, in ms; undefined when it is none. */
function durationMs(text: string): number | undefined {
  const match = /^(\d{1,9})(ms|s|m|h|d)$/.exec(text.trim());
  return match ? Number(match[1]) * (DURATION_UNITS[match[2] as string] as number) : undefined;
}
const DURATION_RULE = "a duration such as 90s, 15m, 1h or 3d";
const durations = z.string().superRefine((text, ctx) => {
  if (text === "off") return;
  const ms = text.split(",").map(durationMs);
  if (ms.some((v) => v === undefined || v <= 0))
    ctx.addIssue({
      code: "custom",
      message: `must be off, or ${DURATION_RULE}, or several separated by commas`,
    });
  else if (ms.length > 10 || ms.some((v, i) => i > 0 && (v as number) <= (ms[i - 1] as number)))
    ctx.addIssue({ code: "custom", message: "must rise, at most 10 of them" });
});

/** MONEYQ_RECHECK_AFTER and MONEYQ_RECONCILE_EVERY. */
function readBooks(read: EnvReader): BooksConfig {
  const recheck = read.check(
    "MONEYQ_RECHECK_AFTER",
    durations,
    CONFIG_DEFAULTS.MONEYQ_RECHECK_AFTER,
  );
  const every = read.check(
    "MONEYQ_RECONCILE_EVERY",
    z.string().refine((t) => t === "off" || (durationMs(t) ?? 0) >= 60_000, {
      message: `must be off, or ${DURATION_RULE}, at least 1m`,
    }),
    "off",
  );
  return Object.freeze({
    recheckAfterMs: Object.freeze(
      recheck === "off" ? [] : recheck.split(",").map((t) => durationMs(t) as number),
    ),
    reconcileEveryMs: every === "off" ? undefined : durationMs(every),
  });
}

/**
 * One secret, or several separated by spaces while rotating: each delivery is signed with all.
 * A secret is `whsec_` and the base64 of its key (Standard Webhooks), or 16 or more characters.
 */
const webhookSecrets = z
  .string()
  .transform((v) => v.split(/\s+/).filter((s) => s !== ""))
  .superRefine((secrets, ctx) => {
    if (secrets.length === 0 || secrets.length > MAX_WEBHOOK_SECRETS)
      ctx.addIssue({
        code: "custom",
        message: `must hold 1 to ${MAX_WEBHOOK_SECRETS} secrets, separated by spaces`,
      });
    secrets.forEach((secret, i) => {
      const problem = webhookSecretRule(secret);
      if (problem !== undefined)
        ctx.addIssue({ code: "custom", message: `secret ${i + 1}: ${problem}` });
    });
  });

/**
 * What src/webhooks/webhook-secret.ts checks, written again here because the configuration
 * sits below the webhooks (test/service/config.test.ts holds the two to the same answers).
 */
function webhookSecretRule(secret: string): string | undefined {
  if (secret.length > 512) return "a webhook secret must be at most 512 characters";
  if (!secret.startsWith("whsec_"))
    return secret.length < 16 ? "a webhook secret must be at least 16 characters" : undefined;
  const encoded = /^whsec_([A-Za-z0-9+/]+)={0,2}$/.exec(secret)?.[1] ?? "";
  const bytes = encoded.length % 4 === 1 ? 0 : Math.floor((encoded.length * 3) / 4);
  return bytes < 16 || bytes > 64
    ? "a whsec_ secret must be whsec_ followed by the base64 of 16 to 64 random bytes"
    : undefined;
}

/** Signed result webhooks: a URL and a secret together, or neither. */
function readWebhook(read: EnvReader): WebhookConfig | undefined {
  const webhookUrl = read.check(
    "MONEYQ_WEBHOOK_URL",
    matching(/^https?:\/\/\S+$/, "must be an http(s) URL"),
    undefined,
  );
  const webhookSecret = read.check("MONEYQ_WEBHOOK_SECRET", webhookSecrets, undefined);
  if ((webhookUrl === undefined) !== (webhookSecret === undefined)) {
    read.issues.push({
      variable: webhookUrl === undefined ? "MONEYQ_WEBHOOK_URL" : "MONEYQ_WEBHOOK_SECRET",
      rule: "MONEYQ_WEBHOOK_URL and MONEYQ_WEBHOOK_SECRET go together",
    });
  }
  const allowedRanges = cidrList(
    "MONEYQ_WEBHOOK_ALLOW_PRIVATE",
    read.text("MONEYQ_WEBHOOK_ALLOW_PRIVATE"),
    read.issues,
  );
  const urlProblem =
    webhookUrl === undefined ? undefined : webhookUrlProblem(webhookUrl, allowedRanges);
  if (urlProblem !== undefined)
    read.issues.push({ variable: "MONEYQ_WEBHOOK_URL", rule: urlProblem });
  return webhookUrl !== undefined && webhookSecret !== undefined
    ? webhookConfig(webhookUrl, webhookSecret, allowedRanges)
    : undefined;
}

/**
 * What the webhooks would refuse at their start, refused here instead, before anything connects:
 * a URL that does not parse, or whose host is an address the address guard blocks (a host name
 * is judged when each delivery resolves it).
 */
function webhookUrlProblem(url: string, allowedRanges: readonly string[]): string | undefined {
  if (!URL.canParse(url)) return "must be an http(s) URL";
  const blocked = blockedWebhookHost(url, allowedRanges);
  if (blocked === undefined) return undefined;
  return `${blocked}: webhooks go only to public addresses, unless MONEYQ_WEBHOOK_ALLOW_PRIVATE lists its range (local development)`;
}

/**
 * PAYMENTS_API_KEY's account and those listed (MONEYQ_ACCOUNTS or MONEYQ_ACCOUNTS_FILE),
 * checked together and against the profile.
 */
function readAllAccounts(read: EnvReader, basics: Basics): AccountConfig[] {
  const { issues } = read;
  const { rate, concurrency, provider, paymentsApiUrl } = basics;
  const accounts: AccountConfig[] = [];
  if (basics.defaultKey !== undefined) {
    accounts.push(account(DEFAULT_ACCOUNT_ALIAS, basics.defaultKey, rate, concurrency));
  }
  const list = accountList(read);
  const keys = readAccountKeys(read);
  if (list !== undefined) {
    accounts.push(...readAccounts(list, { env: read.env, keys }, issues, { rate, concurrency }));
  }
  const listVariable = list?.variable ?? "MONEYQ_ACCOUNTS";
  const seen = new Set<string>();
  for (const a of accounts) {
    if (seen.has(a.alias))
      issues.push({ variable: listVariable, rule: `alias "${a.alias}" is configured twice` });
    seen.add(a.alias);
  }
  checkKeyPattern(provider, accounts, listVariable, issues);
  if (paymentsApiUrl !== undefined && accounts.length === 0 && issues.length === 0) {
    issues.push({
      variable: "PAYMENTS_API_KEY",
      rule: "required when PAYMENTS_API_URL is set (or configure MONEYQ_ACCOUNTS or MONEYQ_ACCOUNTS_FILE)",
    });
  }
  if (paymentsApiUrl === undefined && accounts.length > 0) {
    issues.push({
      variable: "PAYMENTS_API_URL",
      rule: "required when an API key is configured (unset every key to use the embedded sandbox)",
    });
  }
  return accounts;
}

/** A list of accounts as JSON text, and the variable it came from. */
interface AccountList {
  readonly variable: "MONEYQ_ACCOUNTS" | "MONEYQ_ACCOUNTS_FILE";
  readonly text: string;
}

/**
 * MONEYQ_ACCOUNTS, or the file MONEYQ_ACCOUNTS_FILE names (read once, here): one or the
 * other, so that every account is listed in one place.
 */
function accountList(read: EnvReader): AccountList | undefined {
  const inline = read.text("MONEYQ_ACCOUNTS");
  const file = read.text("MONEYQ_ACCOUNTS_FILE");
  if (file === undefined)
    return inline === undefined ? undefined : { variable: "MONEYQ_ACCOUNTS", text: inline };
  if (inline !== undefined) {
    read.issues.push({
      variable: "MONEYQ_ACCOUNTS_FILE",
      rule: "must not be set with MONEYQ_ACCOUNTS: list the accounts in one or the other",
    });
    return undefined;
  }
  const loaded = readBoundedFile(file, MAX_ACCOUNT_FILE_MIB);
  if ("rule" in loaded) {
    read.issues.push({ variable: "MONEYQ_ACCOUNTS_FILE", rule: loaded.rule });
    return undefined;
  }
  return { variable: "MONEYQ_ACCOUNTS_FILE", text: loaded.text };
}

/**
 * MONEYQ_ACCOUNT_KEYS_FILE's keys by name, which accounts name by `apiKeyRef`: "unset", or
 * "refused" when the file's problem is reported already. Its values are judged where an
 * account names them, and never shown.
 */
type AccountKeys = Readonly<Record<string, unknown>> | "unset" | "refused";

function readAccountKeys(read: EnvReader): AccountKeys {
  const variable = "MONEYQ_ACCOUNT_KEYS_FILE";
  const file = read.text(variable);
  if (file === undefined) return "unset";
  if (
    read.text("MONEYQ_ACCOUNTS") === undefined &&
    read.text("MONEYQ_ACCOUNTS_FILE") === undefined
  ) {
    read.issues.push({
      variable,
      rule: "is read only with MONEYQ_ACCOUNTS or MONEYQ_ACCOUNTS_FILE, whose accounts name its keys by apiKeyRef",
    });
    return "refused";
  }
  const loaded = readBoundedFile(file, MAX_ACCOUNT_FILE_MIB);
  let json: unknown;
  try {
    json = "rule" in loaded ? undefined : JSON.parse(loaded.text);
  } catch {
    json = undefined;
  }
  if (json !== null && typeof json === "object" && !Array.isArray(json))
    return json as Record<string, unknown>;
  read.issues.push({
    variable,
    rule: "rule" in loaded ? loaded.rule : 'must be a JSON object of keys by name: {"name":"key"}',
  });
  return "refused";
}

/** The HTTP API: where it listens, its limits, and its tokens (over the configured accounts). */
function readApi(
  read: EnvReader,
  paymentsApiUrl: string | undefined,
  accounts: readonly AccountConfig[],
): ApiConfig {
  return Object.freeze({
    host: read.host("MONEYQ_API_HOST"),
    port: read.port("MONEYQ_API_PORT"),
    bodyLimitBytes: read.int("MONEYQ_API_BODY_LIMIT_BYTES"),
    requestTimeoutMs: read.int("MONEYQ_API_REQUEST_TIMEOUT_MS"),
    headersTimeoutMs: read.int("MONEYQ_API_HEADERS_TIMEOUT_MS"),
    idleTimeoutMs: read.int("MONEYQ_API_IDLE_TIMEOUT_MS"),
    tokens: Object.freeze(
      readTokens(
        read.text("MONEYQ_API_TOKENS"),
        read.env,
        read.issues,
        embeddedUpstream({ paymentsApiUrl })
          ? [DEFAULT_ACCOUNT_ALIAS]
          : accounts.map((a) => a.alias),
      ),
    ),
  });
}

/** MONEYQ_PROVIDER_PROFILE: a file path; read once here, so a bad profile fails start. */
function readProfile(file: string | undefined, issues: ConfigIssue[]): ProviderProfile {
  if (file === undefined) return DEFAULT_PROVIDER_PROFILE;
  const loaded = loadProviderProfile(file);
  if (loaded.success) return loaded.profile;
  for (const i of loaded.issues)
    issues.push({
      variable: "MONEYQ_PROVIDER_PROFILE",
      rule: i.field ? `${i.field}: ${i.rule}` : i.rule,
    });
  return DEFAULT_PROVIDER_PROFILE;
}

const PROVIDER_URL_RULE = "must be an http(s) URL ending in /v1";
const providerUrl = matching(/^https?:\/\/[^\s/]+(\/\S*)?\/v1\/?$/, PROVIDER_URL_RULE);

/** An adapter module: a file that exists, named as Node loads an ES module. */
const moduleFile = z.string().refine(
  (file) => {
    try {
      return /\.m?js$/.test(file) && statSync(file).isFile();
    } catch {
      return false;
    }
  },
  { message: "must be the path of an ES module file (.js or .mjs) that exists" },
);

const sameUrl = (a: string, b: string) =>
  a.replace(/\/$/, "").toLowerCase() === b.replace(/\/$/, "").toLowerCase();

/**
 * PAYMENTS_SANDBOX_API_URL and PAYMENTS_SANDBOX_API_KEY, for `moneyq provider check --submit`:
 * both or neither, and never the production address or a production account's key.
 */
function readProviderSandbox(
  read: EnvReader,
  paymentsApiUrl: string | undefined,
  accounts: readonly AccountConfig[],
): ProviderSandboxConfig | undefined {
  const url = read.check("PAYMENTS_SANDBOX_API_URL", providerUrl, undefined);
  const key = read.check("PAYMENTS_SANDBOX_API_KEY", apiKey, undefined);
  const given = [read.text("PAYMENTS_SANDBOX_API_URL"), read.text("PAYMENTS_SANDBOX_API_KEY")];
  if (given.every((v) => v === undefined)) return undefined;
  if (given.some((v) => v === undefined)) {
    read.issues.push({
      variable: given[0] === undefined ? "PAYMENTS_SANDBOX_API_URL" : "PAYMENTS_SANDBOX_API_KEY",
      rule: "required with the other PAYMENTS_SANDBOX_ variable: the sandbox environment needs its address and its key",
    });
    return undefined;
  }
  if (url === undefined || key === undefined) return undefined;
  if (paymentsApiUrl !== undefined && sameUrl(url, paymentsApiUrl))
    read.issues.push({
      variable: "PAYMENTS_SANDBOX_API_URL",
      rule: "must not be PAYMENTS_API_URL: the provider's sandbox environment has an address of its own",
    });
  if (accounts.some((a) => a.apiKey === key))
    read.issues.push({
      variable: "PAYMENTS_SANDBOX_API_KEY",
      rule: "must not be a production account's key: sandbox and production keys are separate",
    });
  const sandbox = { url };
  Object.defineProperty(sandbox, "apiKey", { value: key, enumerable: false });
  return Object.freeze(sandbox) as ProviderSandboxConfig;
}

/** The profile's own rule for keys, when it has one; names the variable, never the key. */
function checkKeyPattern(
  provider: ProviderProfile,
  accounts: readonly AccountConfig[],
  listVariable: string,
  issues: ConfigIssue[],
): void {
  if (provider.apiKeyPattern === undefined) return;
  const pattern = new RegExp(provider.apiKeyPattern, "u");
  for (const a of accounts) {
    if (pattern.test(a.apiKey)) continue;
    issues.push({
      variable:
        a.alias === DEFAULT_ACCOUNT_ALIAS ? "PAYMENTS_API_KEY" : `${listVariable} (${a.alias})`,
      rule: "must match the provider profile's apiKeyPattern",
    });
  }
}

/** Amounts as decimal text by currency code: an approval policy's thresholds. */
const currencyCode = matching(/^[A-Z]{3,10}$/, "must be a currency code (3 to 10 capital letters)");
const decimalAmount = matching(
  /^\d{1,15}(\.\d{1,8})?$/,
  'must be an amount as decimal text, such as "10000.00"',
);

const amountsByCurrency = z.record(currencyCode, decimalAmount);

const ApprovalEntry = z
  .strictObject({
    account: z.string(),
    batches: z
      .literal("all", { error: 'must be "all" (or leave it out and give batchesOver)' })
      .optional(),
    batchesOver: amountsByCurrency.optional(),
    jobsOver: amountsByCurrency.optional(),
    expiresAfterMs: z
      .int()
      .min(1_000)
      .max(30 * 24 * 3_600_000)
      .optional(),
    resolutions: z
      .literal("second_person", { error: 'must be "second_person" (or leave it out)' })
      .optional(),
  })
  .refine(
    (a) =>
      a.batches !== undefined ||
      a.batchesOver !== undefined ||
      a.jobsOver !== undefined ||
      a.resolutions !== undefined,
    { message: "give batches, batchesOver, jobsOver or resolutions" },
  );

const VelocityWindow = z
  .strictObject({ amount: decimalAmount.optional(), count: z.int().min(0).optional() })
  .refine((w) => w.amount !== undefined || w.count !== undefined, {
    message: "give amount, count or both",
  });

const VelocityEntry = z
  .strictObject({
    account: z.string(),
    currency: currencyCode,
    perHour: VelocityWindow.optional(),
    perDay: VelocityWindow.optional(),
    perBeneficiaryPerDay: VelocityWindow.optional(),
  })
  .refine(
    (e) =>
      e.perHour !== undefined || e.perDay !== undefined || e.perBeneficiaryPerDay !== undefined,
    { message: "give perHour, perDay or perBeneficiaryPerDay" },
  );

function velocityLimit(w: z.infer<typeof VelocityWindow> | undefined): VelocityLimit | undefined {
  if (w === undefined) return undefined;
  return Object.freeze({
    ...(w.amount !== undefined && { amount: w.amount }),
    ...(w.count !== undefined && { count: w.count }),
  });
}

/** MONEYQ_VELOCITY_LIMITS (a JSON array, an entry per account and currency) and the funds retry. */
function readOutflow(read: EnvReader, aliases: readonly string[]): OutflowConfig {
  const velocity = new Map<string, Map<string, CurrencyLimits>>();
  const variable = "MONEYQ_VELOCITY_LIMITS";
  const listed = read.text(variable);
  const entries =
    listed === undefined
      ? []
      : readJsonList(listed, variable, VelocityEntry, "velocity limits", read.issues);
  entries?.forEach((entry, index) => {
    const where = `${variable}[${index}]`;
    const byCurrency = velocity.get(entry.account) ?? new Map<string, CurrencyLimits>();
    if (!aliases.includes(entry.account))
      read.issues.push({
        variable: `${where}.account`,
        rule: `no account "${entry.account}" is configured`,
      });
    else if (byCurrency.has(entry.currency))
      read.issues.push({
        variable: `${where}.currency`,
        rule: `account "${entry.account}" has ${entry.currency} limits already`,
      });
    byCurrency.set(
      entry.currency,
      Object.freeze({
        perHour: velocityLimit(entry.perHour),
        perDay: velocityLimit(entry.perDay),
        perBeneficiaryPerDay: velocityLimit(entry.perBeneficiaryPerDay),
      }),
    );
    velocity.set(entry.account, byCurrency);
  });
  const funds = read.check(
    "MONEYQ_INSUFFICIENT_FUNDS",
    z.enum(["hold", "fail"], { error: "must be hold or fail" }),
    "hold",
  );
  const retry = read.check(
    "MONEYQ_INSUFFICIENT_FUNDS_RETRY",
    z.string().refine((t) => t === "off" || (durationMs(t) ?? 0) >= 1_000, {
      message: `must be off, or ${DURATION_RULE}, at least 1s`,
    }),
    "off",
  );
  return Object.freeze({
    velocity,
    fundsHold: funds === "hold",
    fundsRetryMs: retry === "off" ? undefined : durationMs(retry),
  });
}

/**
 * A variable holding a JSON array of per-account policies: each entry's account configured, and
 * named once; `build` makes the frozen policy of a valid entry.
 */
function readAccountPolicies<S extends z.ZodType<{ account: string }>, P>(
  read: EnvReader,
  aliases: readonly string[],
  list: { readonly variable: string; readonly schema: S; readonly what: string },
  build: (entry: z.output<S>) => P,
): ReadonlyMap<string, P> {
  const out = new Map<string, P>();
  const { variable, schema, what } = list;
  const listed = read.text(variable);
  if (listed === undefined) return out;
  const entries = readJsonList(listed, variable, schema, what, read.issues);
  entries?.forEach((entry, index) => {
    const where = `${variable}[${index}].account`;
    if (!aliases.includes(entry.account))
      read.issues.push({ variable: where, rule: `no account "${entry.account}" is configured` });
    else if (out.has(entry.account))
      read.issues.push({
        variable: where,
        rule: `account "${entry.account}" has a policy already`,
      });
    out.set(entry.account, build(entry));
  });
  return out;
}

/** MONEYQ_APPROVAL_POLICIES: a JSON array, an entry per account that needs approvals. */
function readApprovals(
  read: EnvReader,
  aliases: readonly string[],
): ReadonlyMap<string, ApprovalPolicy> {
  const list = {
    variable: "MONEYQ_APPROVAL_POLICIES",
    schema: ApprovalEntry,
    what: "approval policies",
  };
  return readAccountPolicies(read, aliases, list, (entry) =>
    Object.freeze({
      allBatches: entry.batches === "all",
      batchesOver: Object.freeze({ ...entry.batchesOver }),
      jobsOver: Object.freeze({ ...entry.jobsOver }),
      expiresAfterMs: entry.expiresAfterMs,
      resolutionsBySecondPerson: entry.resolutions === "second_person",
    }),
  );
}

const PaymentRepeatsEntry = z.strictObject({
  account: z.string(),
  policy: z.enum(REPEAT_POLICIES),
  windowDays: z
    .number()
    .refine((days) => days > 0 && days <= 90, {
      message: "must be more than 0 and at most 90 days",
    })
    .optional(),
});

/**
 * MONEYQ_PAYMENT_REPEATS: a JSON array, an entry per account whose policy on repeated payments
 * is not the default (warn, 7 days).
 */
function readPaymentRepeats(
  read: EnvReader,
  aliases: readonly string[],
): ReadonlyMap<string, PaymentRepeatsPolicy> {
  const list = {
    variable: "MONEYQ_PAYMENT_REPEATS",
    schema: PaymentRepeatsEntry,
    what: "policies",
  };
  return readAccountPolicies(read, aliases, list, (entry) =>
    Object.freeze({
      policy: entry.policy,
      windowMs:
        entry.windowDays === undefined
          ? DEFAULT_PAYMENT_REPEATS.windowMs
          : Math.round(entry.windowDays * DAY_MS),
    }),
  );
}

/**
 * A token's `permissions`: a non-empty list of distinct PERMISSIONS. A word that is not one
 * is named by its place, not its value, in case a token was pasted there by mistake.
 */
function permissionRules(words: unknown[], ctx: z.RefinementCtx): void {
  const rule = (message: string) => ctx.addIssue({ code: "custom", message });
  if (words.length === 0) rule("must list at least one permission (leave it out for all four)");
  words.forEach((word, i) => {
    if (!(PERMISSIONS as readonly unknown[]).includes(word))
      rule(
        `the value at [${i}] is not a permission: each must be one of ${PERMISSIONS.join(", ")}`,
      );
  });
  for (const permission of PERMISSIONS)
    if (words.filter((w) => w === permission).length > 1)
      rule(`lists "${permission}" more than once`);
}

const TokenEntry = z
  .strictObject({
    name: alias,
    token: matching(/^\S{16,512}$/, "must be 16 to 512 characters without spaces").optional(),
    tokenEnv: matching(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be a variable name").optional(),
    accounts: z.array(z.string()).min(1),
    permissions: z
      .array(z.unknown())
      .superRefine(permissionRules)
      .transform((words) => PERMISSIONS.filter((p) => words.includes(p)))
      .optional(),
  })
  .refine((t) => (t.token === undefined) !== (t.tokenEnv === undefined), {
    message: "give exactly one of token or tokenEnv",
  });

/**
 * A variable holding a non-empty JSON array of `schema` entries ("an array of `what`"). Each
 * broken rule is an issue named by its path under `variable`; undefined when there is any.
 */
function readJsonList<S extends z.ZodType>(
  listed: string,
  variable: string,
  schema: S,
  what: string,
  issues: ConfigIssue[],
): z.output<S>[] | undefined {
  let json: unknown;
  try {
    json = JSON.parse(listed);
  } catch {
    issues.push({ variable, rule: `must be valid JSON (an array of ${what})` });
    return undefined;
  }
  const parsed = z.array(schema).min(1).safeParse(json);
  if (!parsed.success) {
    for (const i of toFieldIssues(parsed.error.issues, json))
      issues.push({
        variable: `${variable}${i.field.startsWith("[") ? "" : "."}${i.field}`,
        rule: i.rule,
      });
    return undefined;
  }
  return parsed.data;
}

function readTokens(
  listed: string | undefined,
  env: Env,
  issues: ConfigIssue[],
  aliases: readonly string[],
): ApiToken[] {
  if (listed === undefined) return [];
  const variable = "MONEYQ_API_TOKENS";
  const entries = readJsonList(listed, variable, TokenEntry, "tokens", issues);
  if (entries === undefined) return [];
  const out: ApiToken[] = [];
  entries.forEach((entry, index) => {
    let secret = entry.token;
    if (entry.tokenEnv !== undefined) {
      secret = env[entry.tokenEnv];
      if (secret === undefined || !/^\S{16,512}$/.test(secret)) {
        issues.push({
          variable: `${variable}[${index}].tokenEnv`,
          rule: `variable ${entry.tokenEnv} must hold 16 to 512 characters without spaces`,
        });
        return;
      }
    }
    for (const a of entry.accounts)
      if (!aliases.includes(a))
        issues.push({
          variable: `${variable}[${index}].accounts`,
          rule: `no account "${a}" is configured`,
        });
    if (out.some((t) => t.name === entry.name))
      issues.push({
        variable: `${variable}[${index}].name`,
        rule: `name "${entry.name}" is used twice`,
      });
    const token: Omit<ApiToken, "token"> = {
      name: entry.name,
      accounts: Object.freeze([...entry.accounts]),
      permissions: entry.permissions ? Object.freeze(entry.permissions) : PERMISSIONS,
    };
    Object.defineProperty(token, "token", { value: secret, enumerable: false });
    out.push(Object.freeze(token as ApiToken));
  });
  return out;
}

function webhookConfig(
  url: string,
  secrets: readonly string[],
  allowedRanges: readonly string[],
): WebhookConfig {
  const entry = { url, allowedRanges: Object.freeze([...allowedRanges]) } as WebhookConfig;
  Object.defineProperty(entry, "secrets", {
    value: Object.freeze([...secrets]),
    enumerable: false,
  });
  return Object.freeze(entry);
}

/**
 * A comma-separated list of CIDR ranges (`127.0.0.0/8, fd00::/8`), each in its canonical
 * form; each bad entry is an issue that names it.
 */
function cidrList(variable: string, value: string | undefined, issues: ConfigIssue[]): string[] {
  const ranges: string[] = [];
  const whole = (value ?? "").trim().toLowerCase();
  // The switch this variable once was: off is an empty list; on opened every private range.
  if (whole === "0" || whole === "false") return ranges;
  if (whole === "1" || whole === "true") {
    issues.push({
      variable,
      rule: `is no longer a switch ("${value?.trim()}"): it takes a comma-separated list of the CIDR ranges to allow, such as 127.0.0.0/8,::1/128`,
    });
    return ranges;
  }
  for (const entry of (value ?? "").split(",").map((e) => e.trim())) {
    if (entry === "") continue;
    if (!ipaddr.IPv4.isValidCIDRFourPartDecimal(entry) && !ipaddr.IPv6.isValidCIDR(entry)) {
      issues.push({
        variable,
        rule: `"${entry}" is not a CIDR range: give ranges like 127.0.0.0/8 or fd00::/8, comma-separated`,
      });
      continue;
    }
    const problem = allowedRangeProblem(entry);
    if (problem !== undefined) {
      issues.push({ variable, rule: `"${entry}" is refused: ${problem}` });
      continue;
    }
    const [address, bits] = ipaddr.parseCIDR(entry);
    ranges.push(`${address.toString()}/${bits}`);
  }
  return ranges;
}

/** An account whose key is hidden from enumeration, so it cannot leak through a log line. */
export function account(
  alias: string,
  key: string,
  ratePerSecond: number,
  concurrency: number,
): AccountConfig {
  const entry = { alias, ratePerSecond, concurrency } as AccountConfig;
  Object.defineProperty(entry, "apiKey", { value: key, enumerable: false });
  return Object.freeze(entry);
}

/** Where an account entry's key may come from: a variable, or MONEYQ_ACCOUNT_KEYS_FILE. */
interface KeySources {
  readonly env: Env;
  readonly keys: AccountKeys;
}

function readAccounts(
  list: AccountList,
  sources: KeySources,
  issues: ConfigIssue[],
  defaults: { rate: number; concurrency: number },
): AccountConfig[] {
  const { variable } = list;
  const entries = readJsonList(list.text, variable, AccountEntry, "accounts", issues);
  if (entries === undefined) return [];
  let { keys } = sources;
  const firstRef = entries.findIndex((e) => e.apiKeyRef !== undefined);
  if (keys === "unset" && firstRef >= 0) {
    // One missing file, said once rather than once per account.
    issues.push({
      variable: `${variable}[${firstRef}].apiKeyRef`,
      rule: "names a key in MONEYQ_ACCOUNT_KEYS_FILE, which is not set",
    });
    keys = "refused";
  }
  const out: AccountConfig[] = [];
  entries.forEach((entry, index) => {
    const key = entryKey(entry, `${variable}[${index}]`, { env: sources.env, keys }, issues);
    if (key === undefined) return;
    out.push(
      account(
        entry.alias,
        key,
        entry.ratePerSecond ?? defaults.rate,
        entry.concurrency ?? defaults.concurrency,
      ),
    );
  });
  return out;
}

/**
 * An account entry's key, inline or from where it names; undefined (with an issue naming the
 * entry, never the key) when that is unset or the key breaks the rule.
 */
function entryKey(
  entry: z.output<typeof AccountEntry>,
  where: string,
  sources: KeySources,
  issues: ConfigIssue[],
): string | undefined {
  if (entry.apiKey !== undefined) return entry.apiKey;
  if (entry.apiKeyEnv !== undefined) {
    const value = sources.env[entry.apiKeyEnv];
    if (value === undefined || value === "") {
      issues.push({
        variable: `${where}.apiKeyEnv`,
        rule: `variable ${entry.apiKeyEnv} is not set`,
      });
      return undefined;
    }
    if (apiKey.safeParse(value).success) return value;
    issues.push({ variable: entry.apiKeyEnv, rule: API_KEY_RULE });
    return undefined;
  }
  const { keys } = sources;
  if (typeof keys === "string" || entry.apiKeyRef === undefined) return undefined;
  const value = Object.hasOwn(keys, entry.apiKeyRef) ? keys[entry.apiKeyRef] : undefined;
  if (typeof value === "string" && apiKey.safeParse(value).success) return value;
  issues.push({
    variable: `${where}.apiKeyRef`,
    rule:
      value === undefined
        ? "names no key in MONEYQ_ACCOUNT_KEYS_FILE"
        : `its key in MONEYQ_ACCOUNT_KEYS_FILE ${API_KEY_RULE}`,
  });
  return undefined;
}

/** OTLP over HTTP has one path per signal; a base endpoint gets the traces' path appended. */
const OTLP_TRACES_PATH = "v1/traces";

/** An http(s) URL without credentials (they belong in the headers, which stay out of sight). */
const otlpEndpoint = z.string().superRefine((value, ctx) => {
  let url: URL | undefined;
  try {
    url = /^https?:\/\/\S+$/.test(value) ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (url === undefined) ctx.addIssue({ code: "custom", message: "must be an http(s) URL" });
  else if (url.username !== "" || url.password !== "")
    ctx.addIssue({
      code: "custom",
      message: "must not carry credentials: give them in OTEL_EXPORTER_OTLP_HEADERS",
    });
});

/**
 * OpenTelemetry's standard variables, read only when an OTLP endpoint is set: the traces'
 * own endpoint, headers and protocol win over the general ones, as the specification says.
 */
function readTracing(read: EnvReader): TracingConfig | undefined {
  const disabled = read.check("OTEL_SDK_DISABLED", otelFlag, "false") === "true";
  const ownEndpoint = read.check("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", otlpEndpoint, undefined);
  const base = read.check("OTEL_EXPORTER_OTLP_ENDPOINT", otlpEndpoint, undefined);
  const endpoint = ownEndpoint ?? (base && `${base.replace(/\/*$/, "/")}${OTLP_TRACES_PATH}`);
  const named = ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"];
  // Off unless an endpoint is given; with one that is bad, the rest is still checked.
  if (disabled || named.every((name) => read.text(name) === undefined)) return undefined;
  // moneyq exports OTLP over HTTP only: grpc is refused.
  const protocolRule = z.enum(TRACE_PROTOCOLS);
  const protocol =
    read.check("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", protocolRule, undefined) ??
    read.check(
      "OTEL_EXPORTER_OTLP_PROTOCOL",
      protocolRule,
      CONFIG_DEFAULTS.OTEL_EXPORTER_OTLP_PROTOCOL,
    );
  const sampler = read.check(
    "OTEL_TRACES_SAMPLER",
    z.enum(TRACE_SAMPLERS),
    CONFIG_DEFAULTS.OTEL_TRACES_SAMPLER,
  );
  const ratio = read.check(
    "OTEL_TRACES_SAMPLER_ARG",
    matching(/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/, "must be a number from 0 to 1"),
    String(CONFIG_DEFAULTS.OTEL_TRACES_SAMPLER_ARG),
  );
  const entry = {
    endpoint: endpoint ?? "",
    protocol,
    serviceName: read.check(
      "OTEL_SERVICE_NAME",
      matching(/^\S{1,255}$/, "must be 1 to 255 characters without spaces"),
      CONFIG_DEFAULTS.OTEL_SERVICE_NAME,
    ),
    resourceAttributes: Object.freeze(keyValues(read, "OTEL_RESOURCE_ATTRIBUTES", /^[^\s=,]+$/)),
    sampler,
    samplerRatio: Number(ratio),
  } as TracingConfig;
  const headers = {
    ...keyValues(read, "OTEL_EXPORTER_OTLP_HEADERS", HEADER_NAME),
    ...keyValues(read, "OTEL_EXPORTER_OTLP_TRACES_HEADERS", HEADER_NAME),
  };
  Object.defineProperty(entry, "headers", { value: Object.freeze(headers), enumerable: false });
  return Object.freeze(entry);
}

/** The specification's boolean: case-insensitive true or false. */
const otelFlag = z
  .string()
  .transform((v) => v.toLowerCase())
  .refine((v) => v === "true" || v === "false", { message: "must be true or false" });

/** An HTTP header name (RFC 9110's token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * A list `name=value,name=value` as the OpenTelemetry specification writes headers and resource
 * attributes, each value percent-decoded. A bad entry is named by its place, never its text:
 * a header's value may be a key.
 */
function keyValues(read: EnvReader, variable: string, name: RegExp): Record<string, string> {
  const out: Record<string, string> = {};
  const listed = read.text(variable);
  if (listed === undefined) return out;
  listed.split(",").forEach((part, index) => {
    if (part.trim() === "") return;
    const at = part.indexOf("=");
    const key = part.slice(0, Math.max(at, 0)).trim();
    let value: string | undefined;
    try {
      value = decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      value = undefined;
    }
    if (at < 1 || !name.test(key) || value === undefined || !/^[\x20-\x7e]*$/.test(value)) {
      read.issues.push({
        variable,
        rule: `entry ${index + 1} must be name=value: a name without spaces, then visible ASCII characters (percent-encoded if need be)`,
      });
      return;
    }
    out[key] = value;
  });
  return out;
}
