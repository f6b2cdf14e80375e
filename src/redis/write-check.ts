import type { RedisConnection } from "./connection.js";
import { type RedisTroubleCode, redisTroubleOf } from "./refusals.js";

/** How long a check's answer is reused: a load balancer probing every second costs one write. */
export const WRITE_CHECK_CACHE_MS = 1_000;
/** A write that takes longer than this counts as failed: a Redis that slow cannot take traffic. */
const WRITE_CHECK_TIMEOUT_MS = 1_000;
/** How long a check's key lives: it only has to be written. */
const WRITE_CHECK_KEY_MS = 10_000;

export type WriteCheck =
  | { readonly ok: true }
  | { readonly ok: false; readonly code: RedisTroubleCode };

/**
 * Whether Redis takes a write now: a ping would answer while Redis refuses every write (out of
 * memory, read-only after a failover, failing to persist, too few replicas). Writes a small
 * key with a short TTL (keys.ts, readyCheckKeys), at most once per `cacheMs`; concurrent
 * callers share one check. A connection that is not ready fails at once, without a write
 * waiting for a reconnect.
 */
export class RedisWriteCheck {
  readonly #redis: RedisConnection;
  readonly #keys: readonly string[];
  readonly #cacheMs: number;
  #last: { readonly at: number; readonly answer: Promise<WriteCheck> } | undefined;

  constructor(redis: RedisConnection, keys: readonly string[], cacheMs = WRITE_CHECK_CACHE_MS) {
    this.#redis = redis;
    this.#keys = keys;
    this.#cacheMs = cacheMs;
  }

  check(): Promise<WriteCheck> {
    const now = Date.now();
    if (this.#last !== undefined && now - this.#last.at < this.#cacheMs) return this.#last.answer;
    const answer = this.#write();
    this.#last = { at: now, answer };
    return answer;
  }

  async #write(): Promise<WriteCheck> {
    if (this.#redis.status !== "ready") return { ok: false, code: "redis_unavailable" };
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<WriteCheck>((resolve) => {
      timer = setTimeout(resolve, WRITE_CHECK_TIMEOUT_MS, { ok: false, code: "redis_unavailable" });
    });
    const written = Promise.all(
      this.#keys.map((key) => this.#redis.set(key, "1", "PX", WRITE_CHECK_KEY_MS)),
    ).then(
      (): WriteCheck => ({ ok: true }),
      (error: unknown): WriteCheck => ({
        ok: false,
        code: redisTroubleOf(error)?.code ?? "redis_unavailable",
      }),
    );
    try {
      return await Promise.race([written, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }
}
