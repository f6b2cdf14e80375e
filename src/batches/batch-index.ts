import type { RedisConnection } from "../redis/connection.js";
import {
  batchIndexBuiltKey,
  batchIndexKey,
  batchKeys,
  batchMetaPattern,
  type Keyspace,
} from "../redis/keys.js";
import { redisContext } from "../redis/redis-context.js";
import { scanKeys } from "../redis/scan-keys.js";
import type { BatchState } from "./batch-store.js";

/** Ids read from the index per round trip while looking for batches in the asked states. */
const PAGE = 200;

/**
 * At most this many batches of an account are looked at per listing: a filter that matches
 * few of many batches answers with what it found, and says there may be more.
 */
export const MAX_BATCHES_LOOKED_AT = 5_000;

export interface IndexedBatch {
  readonly account: string;
  readonly batchId: string;
  /** Creation time, ms. */
  readonly createdMs: number;
}

export interface IndexPage {
  /** Newest first, across the accounts asked for. */
  readonly batches: readonly IndexedBatch[];
  /** More batches may match than were answered (the limit, or the look-at bound, was reached). */
  readonly more: boolean;
}

/**
 * Each account's batches by creation time (a sorted set that BEGIN_BATCH_SUBMIT adds every
 * new batch to). Batches written before the index existed are added once, by a SCAN of the
 * account's batch metas, on the account's first listing. A batch whose meta is gone (a
 * refused submission deletes it) is dropped from the index when a listing meets it.
 */
export class BatchIndex {
  readonly #redis: RedisConnection;
  readonly #space: Keyspace;

  constructor(redis: RedisConnection, prefix: string) {
    this.#redis = redis;
    this.#space = redisContext(redis, prefix).space;
  }

  /** The newest batches of `accounts` in one of `states` (any state when empty), at most `limit`. */
  async list(
    accounts: readonly string[],
    states: readonly BatchState[],
    limit: number,
  ): Promise<IndexPage> {
    const found: IndexedBatch[] = [];
    let more = false;
    for (const account of accounts) {
      await this.#build(account);
      const page = await this.#listAccount(account, states, limit);
      found.push(...page.batches);
      more ||= page.more;
    }
    found.sort((a, b) => b.createdMs - a.createdMs);
    return { batches: found.slice(0, limit), more: more || found.length > limit };
  }

  async #listAccount(
    account: string,
    states: readonly BatchState[],
    limit: number,
  ): Promise<IndexPage> {
    const index = batchIndexKey(this.#space, account);
    const found: IndexedBatch[] = [];
    const gone: string[] = [];
    let start = 0;
    let exhausted = false;
    while (found.length < limit && start < MAX_BATCHES_LOOKED_AT) {
      const entries = await this.#redis.zrevrange(index, start, start + PAGE - 1, "WITHSCORES");
      if (entries.length === 0) {
        exhausted = true;
        break;
      }
      const ids = entries.filter((_, i) => i % 2 === 0);
      const stateOf = await this.#states(account, ids);
      ids.forEach((batchId, i) => {
        const state = stateOf[i];
        if (state === null || state === undefined) gone.push(batchId);
        else if (states.length === 0 || states.includes(state as BatchState))
          found.push({ account, batchId, createdMs: Number(entries[2 * i + 1]) });
      });
      start += PAGE;
      if (ids.length < PAGE) exhausted = true;
      if (exhausted) break;
    }
    if (gone.length > 0) await this.#redis.zrem(index, ...gone);
    return { batches: found.slice(0, limit), more: !exhausted || found.length > limit };
  }

  async #states(account: string, ids: readonly string[]): Promise<(string | null)[]> {
    const pipeline = this.#redis.pipeline();
    for (const id of ids) pipeline.hget(batchKeys(this.#space, account, id).meta, "state");
    const answers = (await pipeline.exec()) ?? [];
    return answers.map(([error, value]) => {
      if (error) throw error;
      return value as string | null;
    });
  }

  /** Adds the account's batches written before the index existed; once per account. */
  async #build(account: string): Promise<void> {
    const built = batchIndexBuiltKey(this.#space, account);
    if ((await this.#redis.exists(built)) === 1) return;
    const index = batchIndexKey(this.#space, account);
    await scanKeys(this.#redis, batchMetaPattern(this.#space, account), (keys) =>
      this.#addFound(index, keys),
    );
    await this.#redis.set(built, "1");
  }

  /** Adds the batches of one SCAN page's meta keys: one pipeline to read, one ZADD. */
  async #addFound(index: string, keys: readonly string[]): Promise<void> {
    const pipeline = this.#redis.pipeline();
    for (const key of keys) pipeline.hmget(key, "id", "createdAt");
    const entries: (string | number)[] = [];
    for (const [error, value] of (await pipeline.exec()) ?? []) {
      if (error) throw error;
      const [id, createdAt] = value as (string | null)[];
      const createdMs = Date.parse(createdAt ?? "");
      if (id && Number.isFinite(createdMs)) entries.push(createdMs, id);
    }
    if (entries.length > 0) await this.#redis.zadd(index, "NX", ...entries);
  }
}
