import { randomUUID } from "node:crypto";
import type { RedisConnection } from "../redis/connection.js";
import { type Keyspace, sweepKeys } from "../redis/keys.js";
import { defineCatalogue } from "../redis/scripts/catalogue.js";
import type { DriftKind } from "./drift.js";

type SweepRedis = RedisConnection & {
  moneyqDeleteIfHeld(key: string, token: string): Promise<number>;
  moneyqRenewLease(key: string, meta: string, token: string, ms: string): Promise<number>;
};

/**
 * A sweep's lease on its account: renewed a few times within it while the sweep runs, another
 * process's once it lapses (the sweep of a process that died is resumed after this long).
 */
export const SWEEP_LEASE_MS = 10_000;

/** Where a sweep stands: its window, and the list and page it has reached. */
export interface SweepCursor {
  readonly id: string;
  /** The window, ISO 8601: from `since` (inclusive) to `until` (exclusive). */
  readonly since: string;
  readonly until: string;
  /** Index of the list being read, and its next page (1 the first). */
  readonly list: number;
  readonly page: number;
  readonly startedAt: string;
}

/** One place where the books differ, with both sides' evidence. */
export interface DriftItem {
  /** `<kind>:<provider id or job id>`: the same drift found again is the same item. */
  readonly id: string;
  readonly kind: DriftKind;
  readonly account: string;
  readonly currency?: string | undefined;
  readonly amount?: string | undefined;
  /** moneyq's side: the job and its recorded result, or nothing (a debit it never sent). */
  readonly moneyq?: Readonly<Record<string, unknown>> | undefined;
  /** The provider's side: its record as the profile read it, or nothing (missing there). */
  readonly provider?: Readonly<Record<string, unknown>> | undefined;
  /** When it was first found. */
  readonly foundAt: string;
}

/** A finished sweep's counts, per drift kind and currency, as the metrics read them. */
export interface SweepSummary {
  readonly finishedAt: string;
  readonly since: string;
  readonly until: string;
  /** `kind currency` → items and their summed amount (decimal text). */
  readonly drift: Readonly<Record<string, { readonly items: number; readonly amount: string }>>;
  readonly resolved: number;
  readonly reversed: number;
}

/**
 * A sweep's state in Redis, one account's: its lease, its cursor, what it found and read, every
 * drift item ever found, and the last finished sweep's summary (redis/keys.ts, `sweepKeys`).
 */
export class SweepState {
  readonly #redis: SweepRedis;
  readonly #keys: ReturnType<typeof sweepKeys>;
  readonly #token = randomUUID();

  constructor(redis: RedisConnection, space: Keyspace, account: string) {
    defineCatalogue(redis);
    this.#redis = redis as SweepRedis;
    this.#keys = sweepKeys(space, account);
  }

  /** Takes the account's sweep lease; false when another process sweeps it. */
  async lock(): Promise<boolean> {
    const set = await this.#redis.set(this.#keys.lock, this.#token, "PX", SWEEP_LEASE_MS, "NX");
    return set === "OK";
  }

  /** Extends the lease; false when it was lost (this sweep must stop). */
  async renew(): Promise<boolean> {
    const { lock } = this.#keys;
    // No batch's meta: the lease itself stands in its place.
    const renewed = await this.#redis.moneyqRenewLease(
      lock,
      lock,
      this.#token,
      String(SWEEP_LEASE_MS),
    );
    return renewed === 1;
  }

  async unlock(): Promise<void> {
    await this.#redis.moneyqDeleteIfHeld(this.#keys.lock, this.#token);
  }

  /** The sweep under way (stopped by a crash or a restart), if any. */
  async cursor(): Promise<SweepCursor | undefined> {
    const c = await this.#redis.hgetall(this.#keys.cursor);
    if (c.id === undefined || c.since === undefined || c.until === undefined) return undefined;
    return {
      id: c.id,
      since: c.since,
      until: c.until,
      list: Number(c.list ?? 0),
      page: Number(c.page ?? 1),
      startedAt: c.startedAt ?? c.since,
    };
  }

  /** Begins a sweep of a window: a new cursor, and what the last one found and read forgotten. */
  async begin(since: string, until: string): Promise<SweepCursor> {
    const cursor: SweepCursor = {
      id: randomUUID(),
      since,
      until,
      list: 0,
      page: 1,
      startedAt: new Date().toISOString(),
    };
    await this.#redis
      .multi()
      .del(this.#keys.cursor, this.#keys.found, this.#keys.seen)
      .hset(this.#keys.cursor, { ...cursor })
      .exec();
    return cursor;
  }

  /** Moves the cursor on, once a page's records are all recorded. */
  async advance(list: number, page: number): Promise<void> {
    await this.#redis.hset(this.#keys.cursor, { list, page });
  }

  /** The provider's ids a list read so far, for finding moneyq's successes it lacks. */
  async saw(ids: readonly string[]): Promise<void> {
    if (ids.length > 0) await this.#redis.sadd(this.#keys.seen, ...ids);
  }

  async seen(id: string): Promise<boolean> {
    return (await this.#redis.sismember(this.#keys.seen, id)) === 1;
  }

  /**
   * Records a drift item as found by this sweep; the item is kept as first found, and true is
   * answered only the first time it is ever found (so its event is sent once).
   */
  async found(item: DriftItem): Promise<boolean> {
    const [[, isNew]] = (await this.#redis
      .multi()
      .hsetnx(this.#keys.drift, item.id, JSON.stringify(item))
      .sadd(this.#keys.found, item.id)
      .exec()) as [[unknown, number]];
    return isNew === 1;
  }

  /** The drift items this sweep found, as each was first found. */
  async foundItems(): Promise<DriftItem[]> {
    const ids = await this.#redis.smembers(this.#keys.found);
    if (ids.length === 0) return [];
    const raw = await this.#redis.hmget(this.#keys.drift, ...ids.sort());
    return raw.filter((r): r is string => r !== null).map((r) => JSON.parse(r) as DriftItem);
  }

  /** Ends the sweep: its summary kept for the metrics, its cursor gone. */
  async finish(summary: SweepSummary): Promise<void> {
    await this.#redis
      .multi()
      .set(this.#keys.summary, JSON.stringify(summary))
      .del(this.#keys.cursor, this.#keys.seen)
      .exec();
  }

  /** The last finished sweep's summary, if any. */
  async summary(): Promise<SweepSummary | undefined> {
    const raw = await this.#redis.get(this.#keys.summary);
    return raw === null ? undefined : (JSON.parse(raw) as SweepSummary);
  }
}
