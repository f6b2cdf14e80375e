import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";

/**
 * A sliding-window log per account in Redis: at most `limit` requests in any window, across
 * every process. Redis's clock is the one clock, so workers on other machines agree.
 * Returns 0 when a slot was taken, otherwise how many milliseconds until one frees.
 */
const ACQUIRE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) + window - now)`;

export class RateGate {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #windowMs: number;

  /** `marginMs` widens the one-second window to cover the time between taking a slot and arrival. */
  constructor(redis: Redis, prefix: string, marginMs: number) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#windowMs = 1000 + marginMs;
  }

  /** Takes a slot for one request of `account`, or says how long to wait. */
  async acquire(account: string, perSecond: number): Promise<number> {
    const wait = await this.#redis.eval(
      ACQUIRE_SCRIPT,
      1,
      `${this.#prefix}:rate:${account}`,
      String(perSecond),
      String(this.#windowMs),
      randomUUID(),
    );
    return Number(wait);
  }
}
