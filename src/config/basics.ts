// Redis, the provider and its default account, HTTP timeouts, logging.
import { z } from "zod";
import { isClusterUrl, parseClusterUrl } from "../net/redis-url.js";
import { LOG_LEVELS, type LogLevel } from "./choices.js";
import { CONFIG_DEFAULTS } from "./defaults.js";
import type { EnvReader } from "./env-reader.js";
import { moduleFile, providerUrl, readProfile } from "./provider.js";
import { apiKey, matching } from "./rules.js";

/** No PAYMENTS_API_URL: the upstream is the embedded sandbox, and no real money moves. */
export function embeddedUpstream(config: { readonly paymentsApiUrl: string | undefined }): boolean {
  return config.paymentsApiUrl === undefined;
}

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

/** Redis, the provider and its default account, HTTP timeouts, logging. */
export function readBasics(read: EnvReader) {
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

export type Basics = ReturnType<typeof readBasics>;
