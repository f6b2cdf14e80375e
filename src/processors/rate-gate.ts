import type { OutflowCheck } from "../outflow/outflow-check.js";
import { LANE_PRIORITY, type Lane } from "../queues/lanes.js";
import { bullKeys } from "../redis/bullmq-internals.js";
import { Coalescer } from "../redis/coalescer.js";
import type { RedisConnection } from "../redis/connection.js";
import {
  accountPauseKey,
  type Keyspace,
  outflowKeys,
  rateKeys,
  velocityKeys,
} from "../redis/keys.js";
import { RedisClock } from "../redis/redis-clock.js";
import { redisContext } from "../redis/redis-context.js";
import type { ReplicaWaits } from "../redis/replica-waits.js";
import {
  CLEAR_STATUS,
  RESERVE_STATUS,
  VELOCITY_HOLD_BEGUN,
} from "../redis/scripts/lua-constants.js";

type GateRedis = RedisConnection & {
  moneyqReserveSlots(keyCount: number, ...keysAndArgs: string[]): Promise<(number | string)[]>;
  moneyqClearSlots(keyCount: number, ...keysAndArgs: string[]): Promise<(number | string)[]>;
  moneyqPauseAccount(key: string, ms: string): Promise<number>;
};

/** What a request is, beyond its account: its lane, the lock it must hold, what to record. */
export interface SlotOptions {
  readonly lane?: Lane;
  /** The job's qualified queue name (`<prefix>:<queue>`), so bulk can see who waits. */
  readonly queueKey?: string;
  /** The job's lock key and this worker's token: no slot unless the token still holds it. */
  readonly lock?: { readonly key: string; readonly token: string };
  /**
   * For a kind without an idempotency key, the job's own hash (`<prefix>:<queue>:<id>`): refused
   * when its "sent" field is set, which is set as the request leaves. Kept as long as the job.
   */
  readonly sentKey?: string;
  /** A payout's submission: its currency's lane hold and velocity limits are checked too. */
  readonly outflow?: OutflowCheck;
}

/** Why the gate holds a payout's request (docs/safety.md). */
export type OutflowHold =
  | {
      readonly cause: "velocity";
      /** Until the window makes room. */
      readonly ms: number;
      /** Set when this request began the currency's velocity hold: by which limit. */
      readonly began?: "currency" | "beneficiary";
    }
  /** `ms` left of the hold, or 0 until an operator resumes the lane. */
  | { readonly cause: "insufficient_funds"; readonly ms: number };

export type Reservation =
  /**
   * `at`: the slot, on Redis's clock (ms), for its clearance; `delayMs`: how far ahead it was on
   * Redis's clock when reserved. `leaveAt`: the slot on this process's clock
   * (`performance.now()`), when the request leaves, never before the slot on Redis's clock.
   * `clearAt`, for a slot to be cleared: when the clearance is sent, so that its answer comes
   * back before `leaveAt`. `lockUntil`, for a request with a lock token: the earliest its job's
   * lock can lapse, on this process's clock, as the reservation found it.
   */
  | {
      readonly reserved: true;
      readonly delayMs: number;
      readonly at: number;
      readonly leaveAt: number;
      readonly clearAt?: number;
      readonly lockUntil?: number;
    }
  | { readonly reserved: false; readonly retryInMs: number }
  | { readonly reserved: false; readonly cancelled: true }
  | { readonly reserved: false; readonly pausedMs: number }
  | { readonly reserved: false; readonly held: true }
  | { readonly reserved: false; readonly lockLost: true }
  | { readonly reserved: false; readonly alreadySent: true }
  | { readonly reserved: false; readonly yielded: true }
  /** The job's batch holds it (awaiting approval, or scheduled): `ms`, or 0 until approved. */
  | { readonly reserved: false; readonly batchHeldMs: number }
  | { readonly reserved: false; readonly outflowHeld: OutflowHold };

export type Clearance =
  /** `lockUntil`, for a request with a lock token: as the reservation's, found by the clearance. */
  | { readonly clear: true; readonly lockUntil?: number }
  | { readonly clear: false; readonly pausedMs: number }
  | { readonly clear: false; readonly held: true }
  | { readonly clear: false; readonly lockLost: true }
  | { readonly clear: false; readonly late: true }
  | { readonly clear: false; readonly taken: true }
  /** Recorded as sent, but the record is not on the replicas: not to be sent now. */
  | { readonly clear: false; readonly notReplicated: true };

interface SlotRequest {
  readonly weight: number;
  readonly holdKey: string | undefined;
  readonly options: SlotOptions;
}

interface ClearRequest {
  readonly at: number;
  /** A bulk slot reserved ahead, which a lookup or urgent request may have taken. */
  readonly bulk: boolean;
  readonly options: SlotOptions;
}

/** Lookups and urgent requests reserve slots at most this far ahead; beyond it they wait. */
export const MAX_RESERVE_AHEAD_MS = 1_000;
/** A bulk request reserves only a slot this many intervals away at most (and at least 20 ms). */
export const BULK_AHEAD_INTERVALS = 2;
const BULK_AHEAD_MIN_MS = 20;
/** While bulk waits, lookups and urgent requests take at most this many slots in a row. */
export const HIGH_LANE_RUN_CAP = 4;
/** Requests one reservation call takes at most. */
const MAX_REQUESTS_PER_CALL = 256;
/**
 * A clearance is sent a round trip and this much before its slot, so that its answer is back
 * before the request leaves: a few milliseconds of an answer's jitter cost no lateness.
 */
export const CLEARANCE_SPARE_MS = 5;
/** Clearance calls of one account in flight at once: each is timed to its slot. */
const CLEARANCES_IN_FLIGHT = 4;

/**
 * Spaces each account's requests evenly across every process, serves the lanes in order, and
 * checks, as a request takes its slot and again as it leaves, everything that must hold then
 * (lock, cancelled batch, "sent" record, pauses): RESERVE_SLOTS and CLEAR_SLOTS in
 * redis/scripts/ say how. Calls for one account are gathered into one script call.
 */
export class RateGate {
  readonly #redis: GateRedis;
  readonly #space: Keyspace;
  readonly #marginMs: number;
  readonly #replicas: ReplicaWaits;
  /** Redis's clock against this process's, from the round trips of the gate's calls. */
  readonly #clock = new RedisClock();
  /** One per account and rate: its reservations leave one call at a time, gathered. */
  readonly #lanes = new Map<string, Coalescer<SlotRequest, Reservation>>();
  readonly #clearances = new Map<string, Coalescer<ClearRequest, Clearance>>();

  /**
   * `marginMs` stretches each second by that much, to absorb the jitter between a slot and the
   * request's arrival: R requests take 1000 + margin ms, so no sliding second holds more than R.
   */
  constructor(redis: RedisConnection, prefix: string, marginMs: number) {
    this.#redis = redis as GateRedis;
    const context = redisContext(redis, prefix);
    this.#space = context.space;
    this.#marginMs = marginMs;
    this.#replicas = context.replicas;
  }

  /**
   * Reserves the next slot for one request of `account`, limited to `perSecond`. A `weight` of 2
   * also keeps the following slot free: for a request that may leave late (a process's first).
   * With `holdKey` (a batch's meta, or a job's hold), no slot is taken while it holds the job
   * (awaiting approval, scheduled) or once it was cancelled.
   */
  reserve(
    account: string,
    perSecond: number,
    weight = 1,
    holdKey?: string,
    options: SlotOptions = {},
  ): Promise<Reservation> {
    const laneKey = `${account}\n${perSecond}\n${options.queueKey ?? ""}`;
    let lane = this.#lanes.get(laneKey);
    if (!lane) {
      lane = new Coalescer(
        (requests) => this.#reserveMany(account, perSecond, options.queueKey ?? "", requests),
        MAX_REQUESTS_PER_CALL,
      );
      this.#lanes.set(laneKey, lane);
    }
    return lane.add({ weight, holdKey, options });
  }

  /**
   * Before a request whose reservation has a `clearAt` leaves: still clear to send, not late, and
   * (`bulk`: a bulk request's) still its own slot? `at` is the reservation's `at`.
   */
  clear(account: string, at: number, bulk: boolean, options: SlotOptions = {}): Promise<Clearance> {
    let clearances = this.#clearances.get(account);
    if (!clearances) {
      clearances = new Coalescer(
        (requests) => this.#clearMany(account, requests),
        MAX_REQUESTS_PER_CALL,
        CLEARANCES_IN_FLIGHT,
      );
      this.#clearances.set(account, clearances);
    }
    return clearances.add({ at, bulk, options });
  }

  /** The least round trip to Redis of the gate's recent calls (ms), 0 before any. */
  roundTripMs(): number {
    return this.#clock.roundTripMs();
  }

  /** No request of `account` leaves, from any process, for `ms` from now (a 429's Retry-After). */
  async pause(account: string, ms: number): Promise<void> {
    await this.#redis.moneyqPauseAccount(
      rateKeys(this.#space, account).pause,
      String(Math.max(1, Math.ceil(ms))),
    );
  }

  async #reserveMany(
    account: string,
    perSecond: number,
    queueKey: string,
    requests: readonly SlotRequest[],
  ): Promise<Reservation[]> {
    const rate = rateKeys(this.#space, account);
    const rateKey = rate.slot;
    const interval = (1000 + this.#marginMs) / perSecond;
    const lead = this.#clock.roundTripMs() + CLEARANCE_SPARE_MS;
    const outflow = outflowKeys(this.#space, account);
    const keys = [
      rateKey,
      rate.lanes,
      rate.pause,
      accountPauseKey(this.#space, account),
      queueKey === "" ? rate.noQueue : bullKeys.prioritized(queueKey),
      rate.yielded,
      rate.bulkAhead,
      outflow.laneHolds,
      outflow.held,
      outflow.passes,
    ];
    const args = [
      String(interval),
      String(MAX_RESERVE_AHEAD_MS),
      // Bulk reserves a round trip further ahead, so that its clearance can be timed.
      String(Math.max(BULK_AHEAD_MIN_MS, BULK_AHEAD_INTERVALS * interval) + lead),
      String(HIGH_LANE_RUN_CAP),
      // How long a waiting bulk request, or a hand-back, counts: a few slots, 50 ms at least.
      String(Math.max(50, 3 * interval)),
      String(lead),
      String(requests.length),
    ];
    // The velocity logs follow every request's own keys: counted from there.
    const logKeys: string[] = [];
    const logsFrom = keys.length + 3 * requests.length;
    for (const r of requests) {
      const { lock, sentKey, lane = "urgent", outflow: check } = r.options;
      keys.push(r.holdKey ?? rateKey, lock?.key ?? rateKey, sentKey ?? rateKey);
      args.push(
        String(r.weight),
        String(LANE_PRIORITY[lane]),
        r.holdKey === undefined ? "0" : "1",
        lock?.token ?? "",
        sentKey === undefined ? "0" : "1",
        check === undefined ? "" : this.#outflowSpec(account, check, logsFrom, logKeys),
        check?.jobId ?? "",
      );
    }
    keys.push(...logKeys);
    const sentAt = performance.now();
    const answer = await this.#redis.moneyqReserveSlots(keys.length, ...keys, ...args);
    const answeredAt = performance.now();
    this.#clock.sample(sentAt, Number(answer.at(-1)), answeredAt);
    return requests.map((r, i) => {
      const reservation = reservationOf(
        Number(answer[3 * i]),
        Number(answer[3 * i + 1]),
        Number(answer[3 * i + 2]),
      );
      if (!reservation.reserved) return reservation;
      const timed = this.#timed(
        reservation,
        sentAt,
        answeredAt,
        lead,
        r.options.sentKey !== undefined,
      );
      const lockUntil = lockUntilOf(sentAt, Number(answer[3 * requests.length + i]));
      return lockUntil === undefined ? timed : { ...timed, lockUntil };
    });
  }

  /**
   * A payout request's outflow spec for RESERVE_SLOTS: its currency, units and limits, each
   * limit's log and totals appended to `logKeys`, named by their KEYS index (1-based; the logs
   * follow the call's `logsFrom` keys, its own and every request's).
   */
  #outflowSpec(account: string, check: OutflowCheck, logsFrom: number, logKeys: string[]): string {
    const parts = [check.currency, String(check.units), String(check.limits.length)];
    for (const limit of check.limits) {
      const { log, totals } = velocityKeys(
        this.#space,
        account,
        check.currency,
        limit.windowMs,
        limit.beneficiary,
      );
      logKeys.push(log, totals);
      const at = logsFrom + logKeys.length;
      parts.push(String(at - 1), String(at), String(limit.windowMs));
      parts.push(String(limit.maxUnits), String(limit.maxCount), limit.scope);
    }
    return parts.join(" ");
  }

  /**
   * When the request of a reserved slot leaves, on this process's clock: the slot's time as
   * RedisClock maps it, but never outside what this call's own round trip allows (the slot is
   * `delayMs` after a moment between sending and answer), whatever the clock's past said. A slot
   * at least `lead` ahead, or of a request that records "sent", is cleared, `lead` before.
   */
  #timed(
    slot: { readonly delayMs: number; readonly at: number },
    sentAt: number,
    answeredAt: number,
    lead: number,
    recordsSent: boolean,
  ): Reservation {
    const mapped = this.#clock.localOf(slot.at) ?? answeredAt + slot.delayMs;
    const leaveAt = Math.min(Math.max(mapped, sentAt + slot.delayMs), answeredAt + slot.delayMs);
    const cleared = slot.delayMs >= lead || recordsSent;
    return {
      reserved: true,
      delayMs: slot.delayMs,
      at: slot.at,
      leaveAt,
      ...(cleared && { clearAt: leaveAt - lead }),
    };
  }

  async #clearMany(account: string, requests: readonly ClearRequest[]): Promise<Clearance[]> {
    const rate = rateKeys(this.#space, account);
    const keys = [rate.pause, accountPauseKey(this.#space, account), rate.bulkAhead];
    const args = [String(this.#marginMs / 2)];
    for (const r of requests) {
      const { lock, sentKey } = r.options;
      const none = keys[0] as string;
      keys.push(lock?.key ?? none, sentKey ?? none);
      args.push(
        String(r.at),
        lock?.token ?? "",
        sentKey === undefined ? "0" : "1",
        r.bulk ? "1" : "0",
      );
    }
    const sentAt = performance.now();
    const answer = await this.#redis.moneyqClearSlots(keys.length, ...keys, ...(args as string[]));
    this.#clock.sample(sentAt, Number(answer.at(-1)), performance.now());
    const recordedSent = requests.some(
      (r, i) => r.options.sentKey !== undefined && Number(answer[2 * i]) === CLEAR_STATUS.CLEAR,
    );
    // A "sent" record a failover could lose would let the request leave twice: it leaves only
    // once the replicas have it (one wait covers every record of the call). A wait that fails
    // (the master went down) proves nothing either.
    const replicated =
      !recordedSent || (await this.#replicas.replicated(account).catch(() => false));
    return requests.map((r, i) => {
      const status = Number(answer[2 * i]);
      const value = Number(answer[2 * i + 1]);
      if (status === CLEAR_STATUS.CLEAR && r.options.sentKey !== undefined && !replicated)
        return { clear: false, notReplicated: true };
      if (status === CLEAR_STATUS.CLEAR) {
        const lockUntil = lockUntilOf(sentAt, value);
        return lockUntil === undefined ? { clear: true } : { clear: true, lockUntil };
      }
      if (status === CLEAR_STATUS.PAUSED)
        return { clear: false, pausedMs: Math.max(1, Math.ceil(value)) };
      if (status === CLEAR_STATUS.OPERATOR_HELD) return { clear: false, held: true };
      if (status === CLEAR_STATUS.LOCK_LOST) return { clear: false, lockLost: true };
      if (status === CLEAR_STATUS.TAKEN) return { clear: false, taken: true };
      return { clear: false, late: true };
    });
  }
}

/**
 * When a lock the script found with `leftMs` to live lapses at the earliest, on this process's
 * clock: counted from `sentAt`, before the script read it. None for no lock (-1 without a token,
 * or a lock without expiry).
 */
function lockUntilOf(sentAt: number, leftMs: number): number | undefined {
  return leftMs >= 0 ? sentAt + leftMs : undefined;
}

/** A reservation's answer; a reserved slot's local times are added by RateGate. */
function reservationOf(
  status: number,
  value: number,
  at: number,
): Reservation | { readonly reserved: true; readonly delayMs: number; readonly at: number } {
  switch (status) {
    case RESERVE_STATUS.RESERVED:
      // Kept fractional, as the script compared it with the lead.
      return { reserved: true, delayMs: Math.max(0, value), at };
    case RESERVE_STATUS.CANCELLED:
      return { reserved: false, cancelled: true };
    case RESERVE_STATUS.PAUSED:
      return { reserved: false, pausedMs: Math.max(1, Math.ceil(value)) };
    case RESERVE_STATUS.OPERATOR_HELD:
      return { reserved: false, held: true };
    case RESERVE_STATUS.LOCK_LOST:
      return { reserved: false, lockLost: true };
    case RESERVE_STATUS.YIELD:
      return { reserved: false, yielded: true };
    case RESERVE_STATUS.ALREADY_SENT:
      return { reserved: false, alreadySent: true };
    case RESERVE_STATUS.BATCH_HELD:
      return { reserved: false, batchHeldMs: Math.max(0, Math.ceil(value)) };
    case RESERVE_STATUS.VELOCITY_HELD: {
      const began =
        at === VELOCITY_HOLD_BEGUN.CURRENCY
          ? "currency"
          : at === VELOCITY_HOLD_BEGUN.BENEFICIARY
            ? "beneficiary"
            : undefined;
      const ms = Math.max(1, Math.ceil(value));
      return {
        reserved: false,
        outflowHeld: { cause: "velocity", ms, ...(began !== undefined && { began }) },
      };
    }
    case RESERVE_STATUS.FUNDS_HELD:
      return {
        reserved: false,
        outflowHeld: { cause: "insufficient_funds", ms: Math.max(0, Math.ceil(value)) },
      };
    default:
      return { reserved: false, retryInMs: Math.max(1, Math.ceil(value)) };
  }
}
