import type { RedisTroubleCode } from "../errors/error-codes.js";
import { MoneyqError } from "../errors/moneyq-error.js";
import { isRedisConnectionError } from "./errors.js";
import { NotReplicatedError } from "./replica-waits.js";

/**
 * Why Redis would not take a write, as a stable code: out of memory (`maxmemory` reached under
 * `noeviction`), a replica that a failover left read-only, persistence failing
 * (`stop-writes-on-bgsave-error`), too few replicas (`min-replicas-to-write`, or moneyq's own
 * wait on a cluster), or no usable connection (down, loading its data, its master or the
 * cluster down, a script blocking it).
 */
export type { RedisTroubleCode };

/** Redis's trouble: its code, a sentence for a client, and how long to wait before trying again. */
export interface RedisTrouble {
  readonly code: RedisTroubleCode;
  readonly reason: string;
  readonly retryAfterSeconds: number;
}

/** Each code's sentence and wait: long enough not to pile retries on a Redis that is struggling. */
const TROUBLES: Readonly<Record<RedisTroubleCode, Omit<RedisTrouble, "code">>> = {
  redis_out_of_memory: {
    reason: "Redis is out of memory and refuses writes",
    retryAfterSeconds: 5,
  },
  redis_read_only: {
    reason: "Redis is a read-only replica (a failover is under way) and refuses writes",
    retryAfterSeconds: 2,
  },
  redis_not_persisting: {
    reason: "Redis cannot persist to disk and refuses writes",
    retryAfterSeconds: 10,
  },
  redis_not_replicated: {
    reason: "Redis has too few replicas acknowledging writes",
    retryAfterSeconds: 1,
  },
  redis_unavailable: { reason: "Redis is unavailable", retryAfterSeconds: 2 },
};

/**
 * Redis's error codes (the reply's first word; inside a script error, after a `-` on Redis 6)
 * and what each means here. MASTERDOWN: a replica lost its master; BUSY: a script blocks
 * Redis; TRYAGAIN: a cluster slot is moving.
 */
const REPLY_CODES: Readonly<Record<string, RedisTroubleCode>> = {
  OOM: "redis_out_of_memory",
  READONLY: "redis_read_only",
  MISCONF: "redis_not_persisting",
  NOREPLICAS: "redis_not_replicated",
  LOADING: "redis_unavailable",
  MASTERDOWN: "redis_unavailable",
  CLUSTERDOWN: "redis_unavailable",
  BUSY: "redis_unavailable",
  TRYAGAIN: "redis_unavailable",
};

const REPLY_CODE = new RegExp(`(?:^|-)(${Object.keys(REPLY_CODES).join("|")}) `);

/** A command found no usable connection: ioredis's own errors when it gives up or cannot send. */
const NO_CONNECTION =
  /max retries per request|enableOfflineQueue|Failed to refresh slots cache|None of startup nodes/;

/**
 * The connection to Redis is not ready (down, reconnecting, still connecting): a request that
 * needs Redis is answered at once instead of waiting for a reconnect.
 */
export class RedisDownError extends MoneyqError {
  readonly code = "redis_unavailable";
  constructor(status: string) {
    super(`the connection to Redis is not ready (${status})`);
  }
}

/**
 * The trouble `error` says Redis is in, or undefined when it is not Redis refusing or being
 * unreachable (a wrong command, a moneyq error). A transaction aborted for an earlier command's
 * refusal (EXECABORT) is judged by that refusal.
 */
export function redisTroubleOf(error: unknown): RedisTrouble | undefined {
  const code = troubleCodeOf(error);
  return code === undefined ? undefined : { code, ...TROUBLES[code] };
}

function troubleCodeOf(error: unknown): RedisTroubleCode | undefined {
  if (!(error instanceof Error)) return undefined;
  if (error instanceof NotReplicatedError) return "redis_not_replicated";
  if (error instanceof RedisDownError) return "redis_unavailable";
  const reply = REPLY_CODE.exec(error.message)?.[1];
  if (reply !== undefined) return REPLY_CODES[reply];
  const earlier = (error as { previousErrors?: unknown[] }).previousErrors;
  if (error.message.startsWith("EXECABORT") && Array.isArray(earlier))
    return earlier.map(troubleCodeOf).find((c) => c !== undefined);
  if (isRedisConnectionError(error) || NO_CONNECTION.test(error.message))
    return "redis_unavailable";
  return undefined;
}
