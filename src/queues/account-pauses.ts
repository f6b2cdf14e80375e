import type { Queue } from "bullmq";
import type { RedisConnection } from "../redis/connection.js";
import {
  accountPauseKey,
  type Keyspace,
  keyspace,
  legacyJobKeys,
  rateKeys,
} from "../redis/keys.js";
import { redisContext } from "../redis/redis-context.js";
import type { ReplicaWaits } from "../redis/replica-waits.js";
import { WorkDue } from "./work-due.js";

/** Who paused an account: an operator, or moneyq when the provider refused its key. */
export type PauseCause = "operator" | "key_refused";

export interface AccountPause {
  readonly account: string;
  readonly reason: string;
  readonly pausedAt: string;
  /** Absent on a pause recorded by an earlier release. */
  readonly cause?: PauseCause;
}

/**
 * Pausing an account stops every worker of every process from taking its jobs (BullMQ's
 * queue pause), and records why under the account's own key, so an operator can see it and
 * resume, and the rate gate holds the account's running jobs too.
 */
export class AccountPauses {
  readonly #redis: RedisConnection;
  readonly #space: Keyspace;
  readonly #queues: ReadonlyMap<string, Queue>;
  readonly #replicas: ReplicaWaits;
  readonly #due: WorkDue;

  constructor(redis: RedisConnection, prefix: string, queues: ReadonlyMap<string, Queue>) {
    this.#redis = redis;
    this.#due = new WorkDue(redis, prefix);
    const context = redisContext(redis, prefix);
    this.#space = context.space;
    this.#queues = queues;
    this.#replicas = context.replicas;
  }

  async pause(account: string, reason: string, cause: PauseCause = "operator"): Promise<void> {
    await this.#queue(account).pause();
    const entry: AccountPause = { account, reason, pausedAt: new Date().toISOString(), cause };
    await this.#redis.set(accountPauseKey(this.#space, account), JSON.stringify(entry));
    // An operator is told "paused" only once a failover would keep it so: a lost pause would
    // let jobs run. moneyq's own pause is written again by the next refused request.
    if (cause === "operator") await this.#replicas.ensure(account);
  }

  async resume(account: string): Promise<void> {
    const queue = this.#queue(account);
    await this.#redis.del(accountPauseKey(this.#space, account));
    await queue.resume();
    await this.#due.ring(account);
  }

  /** The configured accounts that are paused. */
  async list(): Promise<AccountPause[]> {
    const accounts = [...this.#queues.keys()];
    if (accounts.length === 0) return [];
    // One read per account: on a cluster each account's key is on its own shard.
    const found = await Promise.all(
      accounts.map((a) => this.#redis.get(accountPauseKey(this.#space, a))),
    );
    return found.flatMap((v) => (v === null ? [] : [JSON.parse(v) as AccountPause]));
  }

  /**
   * How long each of `accounts` stays held by a provider's 429 (its Retry-After, shared by
   * every process's rate gate), in ms; accounts not held are left out.
   */
  async rateLimited(accounts: readonly string[]): Promise<Map<string, number>> {
    if (accounts.length === 0) return new Map();
    const answers = await Promise.all(
      accounts.map((account) => this.#redis.pttl(rateKeys(this.#space, account).pause)),
    );
    return new Map(
      accounts.flatMap((account, i) => {
        const ms = Number(answers[i] ?? -2);
        return ms > 0 ? [[account, ms] as const] : [];
      }),
    );
  }

  #queue(account: string): Queue {
    const queue = this.#queues.get(account);
    if (!queue) throw new Error(`unknown account alias ${account}`);
    return queue;
  }
}

/**
 * Moves pauses an earlier release kept in one hash to each account's own key (idempotent; a
 * pause already under the new key wins). Answers how many were moved. A cluster never ran
 * that release: nothing to move there.
 */
export async function migrateLegacyPauses(redis: RedisConnection, prefix: string): Promise<number> {
  if (redis.isCluster) return 0;
  const space = keyspace(prefix);
  const legacy = legacyJobKeys.pausedAccounts(prefix);
  const entries = await redis.hgetall(legacy);
  let moved = 0;
  for (const [account, entry] of Object.entries(entries)) {
    const answers = await redis
      .multi()
      .set(accountPauseKey(space, account), entry, "NX")
      .hdel(legacy, account)
      .exec();
    if (answers?.[0]?.[1] === "OK") moved += 1;
  }
  return moved;
}
