import type { Redis } from "ioredis";
import { Coalescer } from "../coalescer.js";

/**
 * Spaces one account's requests evenly across every process: each request reserves the next
 * slot, `interval * weight` ms after the previous one (GCRA's theoretical arrival time, kept in
 * Redis, on Redis's clock). Even spacing, unlike a burst of a whole second's quota at once,
 * keeps requests from queueing on the way, so they arrive as spaced as they were reserved.
 * One call reserves for several requests of the account in turn, as separate calls would.
 * KEYS[1] the account's slot key, KEYS[1 + i] request i's batch (checked when its ARGV flag
 * is 1); ARGV[1] interval, ARGV[2] maxAhead, ARGV[1 + 2i] weight and ARGV[2 + 2i] flag of
 * request i. Answers two values a request: 1, delay for a slot `delay` ms from now; 0, wait
 * when the next free slot is further than `maxAhead` ms away (try again in `wait` ms); 2, 0
 * without a slot when the request's batch was cancelled: checked here, in the same round
 * trip, because it is the last step before the request leaves.
 */
const RESERVE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local interval = tonumber(ARGV[1])
local maxAhead = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
local taken = false
local out = {}
for i = 1, #KEYS - 1 do
  if ARGV[2 + 2 * i] == '1' and redis.call('HGET', KEYS[1 + i], 'state') == 'cancelled' then
    out[#out + 1] = 2
    out[#out + 1] = '0'
  else
    local start = math.max(tat, now)
    local delay = start - now
    if delay > maxAhead then
      out[#out + 1] = 0
      out[#out + 1] = tostring(delay - maxAhead)
    else
      tat = start + interval * tonumber(ARGV[1 + 2 * i])
      taken = true
      out[#out + 1] = 1
      out[#out + 1] = tostring(delay)
    end
  end
end
if taken then
  redis.call('SET', KEYS[1], tostring(tat), 'PX', math.ceil(tat - now) + 1000)
end
return out`;

type ReservingRedis = Redis & {
  moneyqReserveSlots(keyCount: number, ...keysAndArgs: string[]): Promise<(number | string)[]>;
};

export type Reservation =
  | { readonly reserved: true; readonly delayMs: number }
  | { readonly reserved: false; readonly retryInMs: number }
  | { readonly reserved: false; readonly cancelled: true };

interface SlotRequest {
  readonly weight: number;
  readonly batchKey: string | undefined;
}

/** Slots are reserved at most this far ahead; beyond it the account's queue pauses instead. */
export const MAX_RESERVE_AHEAD_MS = 1_000;
/** Requests one reservation call takes at most. */
const MAX_REQUESTS_PER_CALL = 256;

export class RateGate {
  readonly #redis: ReservingRedis;
  readonly #prefix: string;
  readonly #marginMs: number;
  /** One per account and rate: its reservations leave one call at a time, gathered. */
  readonly #lanes = new Map<string, Coalescer<SlotRequest, Reservation>>();

  /**
   * `marginMs` stretches each second by that much, to absorb the jitter between a slot and the
   * request's arrival: R requests take 1000 + margin ms, so no sliding second holds more than R.
   */
  constructor(redis: Redis, prefix: string, marginMs: number) {
    // A defined command runs by SHA: the script's text is not sent with every request.
    if (!("moneyqReserveSlots" in redis))
      redis.defineCommand("moneyqReserveSlots", { lua: RESERVE_SCRIPT });
    this.#redis = redis as ReservingRedis;
    this.#prefix = prefix;
    this.#marginMs = marginMs;
  }

  /**
   * Reserves the next slot for one request of `account`, limited to `perSecond`. A `weight` of 2
   * also keeps the following slot free: for a request that may leave late (a process's first).
   * With `batchKey`, no slot is taken when that batch was cancelled.
   */
  reserve(account: string, perSecond: number, weight = 1, batchKey?: string): Promise<Reservation> {
    const laneKey = `${account}\n${perSecond}`;
    let lane = this.#lanes.get(laneKey);
    if (!lane) {
      lane = new Coalescer(
        (requests) => this.#reserveMany(account, perSecond, requests),
        MAX_REQUESTS_PER_CALL,
      );
      this.#lanes.set(laneKey, lane);
    }
    return lane.add({ weight, batchKey });
  }

  async #reserveMany(
    account: string,
    perSecond: number,
    requests: readonly SlotRequest[],
  ): Promise<Reservation[]> {
    const rateKey = `${this.#prefix}:rate:${account}`;
    const keys = [rateKey, ...requests.map((r) => r.batchKey ?? rateKey)];
    const args = [String((1000 + this.#marginMs) / perSecond), String(MAX_RESERVE_AHEAD_MS)];
    for (const r of requests) args.push(String(r.weight), r.batchKey === undefined ? "0" : "1");
    const answer = await this.#redis.moneyqReserveSlots(keys.length, ...keys, ...args);
    return requests.map((_, i) => {
      const status = Number(answer[2 * i]);
      if (status === 2) return { reserved: false, cancelled: true };
      // Kept fractional: the caller sends at once when the slot is under a millisecond away.
      const ms = Math.max(0, Number(answer[2 * i + 1]));
      return status === 1
        ? { reserved: true, delayMs: ms }
        : { reserved: false, retryInMs: Math.max(1, Math.ceil(ms)) };
    });
  }
}
