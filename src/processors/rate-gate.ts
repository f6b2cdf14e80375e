import type { Redis } from "ioredis";

/**
 * Spaces one account's requests evenly across every process: each request reserves the next
 * slot, `interval` ms after the previous one (GCRA's theoretical arrival time, kept in Redis,
 * on Redis's clock). Even spacing, unlike a burst of a whole second's quota at once, keeps
 * requests from queueing on the way, so they arrive as spaced as they were reserved.
 * Returns [1, delay] for a slot `delay` ms from now, or [0, wait] when the next free slot is
 * further than `maxAhead` ms away (try again in `wait` ms), or [2, 0] without a slot when the
 * request's batch (KEYS[2], checked when ARGV[3] is 1) was cancelled: checked here, in the
 * same round trip, because it is the last step before the request leaves.
 */
const RESERVE_SCRIPT = `
if ARGV[3] == '1' and redis.call('HGET', KEYS[2], 'state') == 'cancelled' then
  return {2, '0'}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local interval = tonumber(ARGV[1])
local maxAhead = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
local start = math.max(tat, now)
local delay = start - now
if delay > maxAhead then
  return {0, tostring(delay - maxAhead)}
end
redis.call('SET', KEYS[1], tostring(start + interval), 'PX', math.ceil(delay + interval) + 1000)
return {1, tostring(delay)}`;

type ReservingRedis = Redis & {
  moneyqReserveSlot(
    key: string,
    batchKey: string,
    interval: string,
    maxAhead: string,
    checkBatch: string,
  ): Promise<[number, string]>;
};

export type Reservation =
  | { readonly reserved: true; readonly delayMs: number }
  | { readonly reserved: false; readonly retryInMs: number }
  | { readonly reserved: false; readonly cancelled: true };

/** Slots are reserved at most this far ahead; beyond it the account's queue pauses instead. */
export const MAX_RESERVE_AHEAD_MS = 1_000;

export class RateGate {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #marginMs: number;

  /**
   * `marginMs` stretches each second by that much, to absorb the jitter between a slot and the
   * request's arrival: R requests take 1000 + margin ms, so no sliding second holds more than R.
   */
  constructor(redis: Redis, prefix: string, marginMs: number) {
    // A defined command runs by SHA: the script's text is not sent with every request.
    if (!("moneyqReserveSlot" in redis))
      redis.defineCommand("moneyqReserveSlot", { numberOfKeys: 2, lua: RESERVE_SCRIPT });
    this.#redis = redis;
    this.#prefix = prefix;
    this.#marginMs = marginMs;
  }

  /**
   * Reserves the next slot for one request of `account`, limited to `perSecond`. A `weight` of 2
   * also keeps the following slot free: for a request that may leave late (a process's first).
   * With `batchKey`, no slot is taken when that batch was cancelled.
   */
  async reserve(
    account: string,
    perSecond: number,
    weight = 1,
    batchKey?: string,
  ): Promise<Reservation> {
    const interval = ((1000 + this.#marginMs) / perSecond) * weight;
    const rateKey = `${this.#prefix}:rate:${account}`;
    const [reserved, ms] = await (this.#redis as ReservingRedis).moneyqReserveSlot(
      rateKey,
      batchKey ?? rateKey,
      String(interval),
      String(MAX_RESERVE_AHEAD_MS),
      batchKey === undefined ? "0" : "1",
    );
    if (reserved === 2) return { reserved: false, cancelled: true };
    // Kept fractional: the caller sends at once when the slot is under a millisecond away.
    const value = Math.max(0, Number(ms));
    return reserved === 1
      ? { reserved: true, delayMs: value }
      : { reserved: false, retryInMs: Math.max(1, Math.ceil(value)) };
  }
}
