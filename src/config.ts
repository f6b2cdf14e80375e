import { z } from "zod";
import { toFieldIssues } from "./contract/field-issues.js";

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
  /** The provider's base address; undefined means "run the embedded sandbox". */
  readonly paymentsApiUrl: string | undefined;
  readonly accounts: readonly AccountConfig[];
  readonly http: { readonly connectTimeoutMs: number; readonly requestTimeoutMs: number };
  readonly logLevel: LogLevel;
  /** Prefix of every Redis key moneyq writes. */
  readonly redisPrefix: string;
  readonly pipeline: PipelineConfig;
  /** Refuse to start when Redis may evict or lose jobs. */
  readonly requireSafeRedis: boolean;
  /** Signed result webhooks; undefined when no URL is configured. */
  readonly webhook: WebhookConfig | undefined;
  /** Rate and concurrency of an account configured without its own (and of the embedded one). */
  readonly accountDefaults: { readonly ratePerSecond: number; readonly concurrency: number };
  readonly api: ApiConfig;
  readonly metrics: MetricsConfig;
}

export interface MetricsConfig {
  /** Where a worker-only process serves /metrics (API processes serve it on the API). */
  readonly host: string;
  readonly port: number;
  /** How long a scrape's Redis readings (queue depth, backlog) are reused. */
  readonly cacheMs: number;
}

export interface ApiConfig {
  readonly host: string;
  readonly port: number;
  /** Largest request body (a batch upload), in bytes. */
  readonly bodyLimitBytes: number;
  /** Bearer tokens; empty means every request is refused (but the embedded-sandbox dev token). */
  readonly tokens: readonly ApiToken[];
}

/** A bearer token of the HTTP API and the accounts it may use. */
export interface ApiToken {
  /** Names the token in logs; never the token itself. */
  readonly name: string;
  /** Non-enumerable, like API keys. */
  readonly token: string;
  readonly accounts: readonly string[];
}

export interface PipelineConfig {
  /** Submissions of one job before its outcome is looked up. */
  readonly maxAttempts: number;
  /** How long a PENDING outcome is confirmed before it needs reconciliation. */
  readonly confirmDeadlineMs: number;
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
}

export interface WebhookConfig {
  readonly url: string;
  /** Non-enumerable, like API keys. */
  readonly secret: string;
  /** Allow loopback, link-local and private addresses (local development only). */
  readonly allowPrivateAddresses: boolean;
}

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Every default in one place; README's configuration table lists the same. */
export const CONFIG_DEFAULTS = Object.freeze({
  REDIS_URL: "redis://127.0.0.1:6379",
  MONEYQ_RATE_LIMIT_PER_SECOND: 50,
  MONEYQ_CONCURRENCY: 16,
  MONEYQ_CONNECT_TIMEOUT_MS: 5_000,
  MONEYQ_REQUEST_TIMEOUT_MS: 30_000,
  MONEYQ_LOG_LEVEL: "info" as LogLevel,
  MONEYQ_REDIS_PREFIX: "moneyq",
  MONEYQ_MAX_ATTEMPTS: 8,
  MONEYQ_CONFIRM_DEADLINE_MS: 15 * 60_000,
  MONEYQ_RESULTS_MAXLEN: 100_000,
  MONEYQ_RETENTION_MS: 7 * 24 * 3_600_000,
  MONEYQ_RATE_WINDOW_MARGIN_MS: 40,
  MONEYQ_LOCK_DURATION_MS: 30_000,
  MONEYQ_STALLED_INTERVAL_MS: 30_000,
  MONEYQ_SHUTDOWN_GRACE_MS: 10_000,
  MONEYQ_API_HOST: "127.0.0.1",
  MONEYQ_API_PORT: 8080,
  MONEYQ_API_BODY_LIMIT_BYTES: 64 * 1024 * 1024,
  MONEYQ_METRICS_HOST: "127.0.0.1",
  MONEYQ_METRICS_PORT: 9464,
  MONEYQ_METRICS_CACHE_MS: 2_000,
});

/** Alias of the account configured by PAYMENTS_API_KEY. */
export const DEFAULT_ACCOUNT_ALIAS = "default";

/** Every variable moneyq reads; any other `MONEYQ_*` variable is a typo and fails start. */
export const KNOWN_VARIABLES = [
  "REDIS_URL",
  "PAYMENTS_API_URL",
  "PAYMENTS_API_KEY",
  "MONEYQ_ACCOUNTS",
  "MONEYQ_RATE_LIMIT_PER_SECOND",
  "MONEYQ_CONCURRENCY",
  "MONEYQ_CONNECT_TIMEOUT_MS",
  "MONEYQ_REQUEST_TIMEOUT_MS",
  "MONEYQ_LOG_LEVEL",
  "MONEYQ_REDIS_PREFIX",
  "MONEYQ_MAX_ATTEMPTS",
  "MONEYQ_CONFIRM_DEADLINE_MS",
  "MONEYQ_RESULTS_MAXLEN",
  "MONEYQ_RETENTION_MS",
  "MONEYQ_RATE_WINDOW_MARGIN_MS",
  "MONEYQ_LOCK_DURATION_MS",
  "MONEYQ_STALLED_INTERVAL_MS",
  "MONEYQ_SHUTDOWN_GRACE_MS",
  "MONEYQ_REQUIRE_SAFE_REDIS",
  "MONEYQ_WEBHOOK_URL",
  "MONEYQ_WEBHOOK_SECRET",
  "MONEYQ_WEBHOOK_ALLOW_PRIVATE",
  "MONEYQ_API_HOST",
  "MONEYQ_API_PORT",
  "MONEYQ_API_BODY_LIMIT_BYTES",
  "MONEYQ_API_TOKENS",
  "MONEYQ_METRICS_HOST",
  "MONEYQ_METRICS_PORT",
  "MONEYQ_METRICS_CACHE_MS",
] as const;

export interface ConfigIssue {
  readonly variable: string;
  readonly rule: string;
}

/** Start-up refused: names each variable and its rule, never a value. */
export class ConfigError extends Error {
  readonly code = "config_invalid";
  readonly issues: readonly ConfigIssue[];
  constructor(issues: readonly ConfigIssue[]) {
    super(`Invalid configuration:\n${issues.map((i) => `  ${i.variable}: ${i.rule}`).join("\n")}`);
    this.name = "ConfigError";
    this.issues = issues;
  }
}

/** A string rule whose message is kept word for word (a refinement, not a bare pattern). */
function matching(pattern: RegExp, message: string) {
  return z.string().refine((v) => pattern.test(v), { message });
}

const API_KEY_RULE = "must be 8 to 512 characters without spaces";
const apiKey = matching(/^\S{8,512}$/, API_KEY_RULE);
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
    ratePerSecond: z.int().min(1).max(100_000).optional(),
    concurrency: z.int().min(1).max(1_000).optional(),
  })
  .refine((a) => (a.apiKey === undefined) !== (a.apiKeyEnv === undefined), {
    message: "give exactly one of apiKey or apiKeyEnv",
  });

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Reads configuration from `env` (default: the process environment) once, and returns it
 * validated and frozen. Throws ConfigError listing every problem.
 */
export function loadConfig(env: Env = process.env): Config {
  const issues: ConfigIssue[] = [];
  const text = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value === "" ? undefined : value;
  };
  const check = <T>(name: string, schema: z.ZodType<T>, fallback: T): T => {
    const value = text(name);
    if (value === undefined) return fallback;
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    for (const i of toFieldIssues(parsed.error.issues, value))
      issues.push({ variable: name, rule: i.rule });
    return fallback;
  };

  for (const name of Object.keys(env)) {
    if (name.startsWith("MONEYQ_") && !(KNOWN_VARIABLES as readonly string[]).includes(name)) {
      issues.push({
        variable: name,
        rule: "unknown variable (see the configuration table in README.md)",
      });
    }
  }

  const redisUrl = check(
    "REDIS_URL",
    matching(/^rediss?:\/\/\S+$/, "must be a redis:// or rediss:// URL"),
    CONFIG_DEFAULTS.REDIS_URL,
  );
  const paymentsApiUrl = check(
    "PAYMENTS_API_URL",
    matching(/^https?:\/\/[^\s/]+(\/\S*)?\/v1\/?$/, "must be an http(s) URL ending in /v1"),
    undefined,
  );
  const defaultKey = check("PAYMENTS_API_KEY", apiKey, undefined);
  const rate = Number(
    check(
      "MONEYQ_RATE_LIMIT_PER_SECOND",
      positiveInt,
      String(CONFIG_DEFAULTS.MONEYQ_RATE_LIMIT_PER_SECOND),
    ),
  );
  const concurrency = Number(
    check("MONEYQ_CONCURRENCY", positiveInt, String(CONFIG_DEFAULTS.MONEYQ_CONCURRENCY)),
  );
  const connectTimeoutMs = Number(
    check(
      "MONEYQ_CONNECT_TIMEOUT_MS",
      positiveInt,
      String(CONFIG_DEFAULTS.MONEYQ_CONNECT_TIMEOUT_MS),
    ),
  );
  const requestTimeoutMs = Number(
    check(
      "MONEYQ_REQUEST_TIMEOUT_MS",
      positiveInt,
      String(CONFIG_DEFAULTS.MONEYQ_REQUEST_TIMEOUT_MS),
    ),
  );
  const logLevel = check(
    "MONEYQ_LOG_LEVEL",
    z.string().refine((v): v is LogLevel => (LOG_LEVELS as readonly string[]).includes(v), {
      message: `must be one of ${LOG_LEVELS.join(", ")}`,
    }),
    CONFIG_DEFAULTS.MONEYQ_LOG_LEVEL,
  );
  const redisPrefix = check(
    "MONEYQ_REDIS_PREFIX",
    matching(/^[A-Za-z0-9:_{}-]{1,64}$/, "must be 1 to 64 letters, digits or : _ - { }"),
    CONFIG_DEFAULTS.MONEYQ_REDIS_PREFIX,
  );

  const int = (name: keyof typeof CONFIG_DEFAULTS, schema = positiveInt) =>
    Number(check(name, schema, String(CONFIG_DEFAULTS[name])));
  const pipeline: PipelineConfig = Object.freeze({
    maxAttempts: int("MONEYQ_MAX_ATTEMPTS"),
    confirmDeadlineMs: int("MONEYQ_CONFIRM_DEADLINE_MS"),
    resultsMaxLen: int("MONEYQ_RESULTS_MAXLEN"),
    retentionMs: int("MONEYQ_RETENTION_MS"),
    rateWindowMarginMs: int("MONEYQ_RATE_WINDOW_MARGIN_MS", wholeNumber),
    lockDurationMs: int("MONEYQ_LOCK_DURATION_MS"),
    stalledIntervalMs: int("MONEYQ_STALLED_INTERVAL_MS"),
    shutdownGraceMs: int("MONEYQ_SHUTDOWN_GRACE_MS", wholeNumber),
  });
  const isOn = (name: string) => ["1", "true"].includes(check(name, flag, "0"));
  const requireSafeRedis = isOn("MONEYQ_REQUIRE_SAFE_REDIS");
  const webhookUrl = check(
    "MONEYQ_WEBHOOK_URL",
    matching(/^https?:\/\/\S+$/, "must be an http(s) URL"),
    undefined,
  );
  const webhookSecret = check(
    "MONEYQ_WEBHOOK_SECRET",
    matching(/^\S{16,512}$/, "must be 16 to 512 characters without spaces"),
    undefined,
  );
  if ((webhookUrl === undefined) !== (webhookSecret === undefined)) {
    issues.push({
      variable: webhookUrl === undefined ? "MONEYQ_WEBHOOK_URL" : "MONEYQ_WEBHOOK_SECRET",
      rule: "MONEYQ_WEBHOOK_URL and MONEYQ_WEBHOOK_SECRET go together",
    });
  }
  const webhook =
    webhookUrl !== undefined && webhookSecret !== undefined
      ? webhookConfig(webhookUrl, webhookSecret, isOn("MONEYQ_WEBHOOK_ALLOW_PRIVATE"))
      : undefined;

  const accounts: AccountConfig[] = [];
  if (defaultKey !== undefined) {
    accounts.push(account(DEFAULT_ACCOUNT_ALIAS, defaultKey, rate, concurrency));
  }
  const listed = text("MONEYQ_ACCOUNTS");
  if (listed !== undefined) {
    accounts.push(...readAccounts(listed, env, issues, { rate, concurrency }));
  }
  const seen = new Set<string>();
  for (const a of accounts) {
    if (seen.has(a.alias))
      issues.push({ variable: "MONEYQ_ACCOUNTS", rule: `alias "${a.alias}" is configured twice` });
    seen.add(a.alias);
  }
  if (paymentsApiUrl !== undefined && accounts.length === 0 && issues.length === 0) {
    issues.push({
      variable: "PAYMENTS_API_KEY",
      rule: "required when PAYMENTS_API_URL is set (or configure MONEYQ_ACCOUNTS)",
    });
  }
  if (paymentsApiUrl === undefined && accounts.length > 0) {
    issues.push({
      variable: "PAYMENTS_API_URL",
      rule: "required when an API key is configured (unset every key to use the embedded sandbox)",
    });
  }
  const host = (name: "MONEYQ_API_HOST" | "MONEYQ_METRICS_HOST") =>
    check(
      name,
      matching(/^[A-Za-z0-9.:-]{1,255}$/, "must be a host name or IP address"),
      CONFIG_DEFAULTS[name],
    );
  const port = (name: "MONEYQ_API_PORT" | "MONEYQ_METRICS_PORT") =>
    Number(
      check(
        name,
        matching(/^\d{1,5}$/, "must be a port number, 0 to 65535").refine(
          (v) => Number(v) <= 65_535,
          { message: "must be a port number, 0 to 65535" },
        ),
        String(CONFIG_DEFAULTS[name]),
      ),
    );
  const api: ApiConfig = Object.freeze({
    host: host("MONEYQ_API_HOST"),
    port: port("MONEYQ_API_PORT"),
    bodyLimitBytes: int("MONEYQ_API_BODY_LIMIT_BYTES"),
    tokens: Object.freeze(
      readTokens(
        text("MONEYQ_API_TOKENS"),
        env,
        issues,
        paymentsApiUrl === undefined ? [DEFAULT_ACCOUNT_ALIAS] : accounts.map((a) => a.alias),
      ),
    ),
  });
  const metrics: MetricsConfig = Object.freeze({
    host: host("MONEYQ_METRICS_HOST"),
    port: port("MONEYQ_METRICS_PORT"),
    cacheMs: int("MONEYQ_METRICS_CACHE_MS", wholeNumber),
  });
  if (issues.length > 0) throw new ConfigError(issues);

  return Object.freeze({
    redisUrl,
    paymentsApiUrl,
    accounts: Object.freeze(accounts),
    http: Object.freeze({ connectTimeoutMs, requestTimeoutMs }),
    logLevel,
    redisPrefix,
    pipeline,
    requireSafeRedis,
    webhook,
    accountDefaults: Object.freeze({ ratePerSecond: rate, concurrency }),
    api,
    metrics,
  });
}

const TokenEntry = z
  .strictObject({
    name: alias,
    token: matching(/^\S{16,512}$/, "must be 16 to 512 characters without spaces").optional(),
    tokenEnv: matching(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be a variable name").optional(),
    accounts: z.array(z.string()).min(1),
  })
  .refine((t) => (t.token === undefined) !== (t.tokenEnv === undefined), {
    message: "give exactly one of token or tokenEnv",
  });

function readTokens(
  listed: string | undefined,
  env: Env,
  issues: ConfigIssue[],
  aliases: readonly string[],
): ApiToken[] {
  if (listed === undefined) return [];
  const variable = "MONEYQ_API_TOKENS";
  let json: unknown;
  try {
    json = JSON.parse(listed);
  } catch {
    issues.push({ variable, rule: "must be valid JSON (an array of tokens)" });
    return [];
  }
  const parsed = z.array(TokenEntry).min(1).safeParse(json);
  if (!parsed.success) {
    for (const i of toFieldIssues(parsed.error.issues, json))
      issues.push({
        variable: `${variable}${i.field.startsWith("[") ? "" : "."}${i.field}`,
        rule: i.rule,
      });
    return [];
  }
  const out: ApiToken[] = [];
  parsed.data.forEach((entry, index) => {
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
    const token = { name: entry.name, accounts: Object.freeze([...entry.accounts]) } as ApiToken;
    Object.defineProperty(token, "token", { value: secret, enumerable: false });
    out.push(Object.freeze(token));
  });
  return out;
}

function webhookConfig(url: string, secret: string, allowPrivateAddresses: boolean): WebhookConfig {
  const entry = { url, allowPrivateAddresses } as WebhookConfig;
  Object.defineProperty(entry, "secret", { value: secret, enumerable: false });
  return Object.freeze(entry);
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

function readAccounts(
  listed: string,
  env: Env,
  issues: ConfigIssue[],
  defaults: { rate: number; concurrency: number },
): AccountConfig[] {
  let json: unknown;
  try {
    json = JSON.parse(listed);
  } catch {
    issues.push({ variable: "MONEYQ_ACCOUNTS", rule: "must be valid JSON (an array of accounts)" });
    return [];
  }
  const parsed = z.array(AccountEntry).min(1).safeParse(json);
  if (!parsed.success) {
    for (const i of toFieldIssues(parsed.error.issues, json)) {
      issues.push({
        variable: `MONEYQ_ACCOUNTS${i.field.startsWith("[") ? "" : "."}${i.field}`,
        rule: i.rule,
      });
    }
    return [];
  }
  const out: AccountConfig[] = [];
  parsed.data.forEach((entry, index) => {
    let key = entry.apiKey;
    if (entry.apiKeyEnv !== undefined) {
      const value = env[entry.apiKeyEnv];
      const where = `MONEYQ_ACCOUNTS[${index}].apiKeyEnv`;
      if (value === undefined || value === "") {
        issues.push({ variable: where, rule: `variable ${entry.apiKeyEnv} is not set` });
        return;
      }
      if (!apiKey.safeParse(value).success) {
        issues.push({ variable: entry.apiKeyEnv, rule: API_KEY_RULE });
        return;
      }
      key = value;
    }
    out.push(
      account(
        entry.alias,
        key as string,
        entry.ratePerSecond ?? defaults.rate,
        entry.concurrency ?? defaults.concurrency,
      ),
    );
  });
  return out;
}
