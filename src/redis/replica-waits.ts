import { MoneyqError } from "../errors/moneyq-error.js";
import { Coalescer } from "./coalescer.js";
import type { RedisConnection } from "./connection.js";
import { type Keyspace, replicationMarkKey } from "./keys.js";
import { defineCatalogue } from "./scripts/catalogue.js";

type CountingRedis = RedisConnection & {
  moneyqMarkAndCountReplicas(key: string, keepMs: string): Promise<number>;
};

/**
 * How long a write waits for its replicas before it counts as not replicated. Replicas on a
 * healthy network acknowledge within a millisecond; one that takes a second is lagging or gone.
 */
export const REPLICA_WAIT_MS = 1_000;

/**
 * A write that must outlive a failover was not acknowledged by every replica in time: the
 * master holds it, but a replica promoted now might not. Whoever made it tries again (the
 * write is idempotent) or says so (503).
 */
export class NotReplicatedError extends MoneyqError {
  readonly code = "redis_not_replicated";
  constructor(acknowledged: number, replicas: number) {
    super(
      `Redis did not replicate the write in time (${acknowledged} of ${replicas} replicas ` +
        `acknowledged within ${REPLICA_WAIT_MS} ms); nothing is lost yet: try again`,
    );
  }
}

/**
 * Waits, where a failover could lose a write, until the write is on every replica that could
 * be promoted (docs/scaling.md, "What a failover can lose"). Only on a cluster: a single Redis
 * has no failover of moneyq's to lose a write to. Replication keeps the master's order, so one
 * wait covers every write the account's master took before it.
 */
export class ReplicaWaits {
  readonly #redis: CountingRedis;
  readonly #space: Keyspace;
  readonly #timeoutMs: number;
  /** One wait at a time a tag; callers that arrive meanwhile share the next (see #wait). */
  readonly #waits = new Map<string, Coalescer<undefined, Acknowledged | undefined>>();

  constructor(redis: RedisConnection, space: Keyspace, timeoutMs = REPLICA_WAIT_MS) {
    defineCatalogue(redis);
    this.#redis = redis as CountingRedis;
    this.#space = space;
    this.#timeoutMs = timeoutMs;
  }

  /**
   * True once every replica online at the master of `tag`'s slot has acknowledged the writes
   * made there so far (`tag`: an account's alias, or the webhook queue's tag); true at once on
   * a single Redis, or on a master without replicas (it cannot fail over: it can only restart
   * from its own disk, as a single Redis does).
   */
  async replicated(tag: string): Promise<boolean> {
    const wait = await this.#wait(tag);
    return wait === undefined || wait.acked >= wait.online;
  }

  /** `replicated`, or NotReplicatedError. */
  async ensure(tag: string): Promise<void> {
    const wait = await this.#wait(tag);
    if (wait !== undefined && wait.acked < wait.online)
      throw new NotReplicatedError(wait.acked, wait.online);
  }

  /**
   * How many replicas are online at the tag's master, and how many acknowledged; none to ask:
   * undefined. `WAIT` holds its connection until it answers, so the callers that arrive while
   * one waits share the next wait instead of queueing one each (it starts after their writes,
   * so it covers them): a lagging replica holds the connection about a second at a time, not a
   * second a caller.
   */
  #wait(tag: string): Promise<Acknowledged | undefined> {
    if (!this.#space.cluster) return Promise.resolve(undefined);
    let waits = this.#waits.get(tag);
    if (!waits) {
      waits = new Coalescer(async (callers) => {
        const acknowledged = await this.#waitOnce(tag);
        return callers.map(() => acknowledged);
      }, Number.POSITIVE_INFINITY);
      this.#waits.set(tag, waits);
    }
    return waits.add(undefined);
  }

  async #waitOnce(tag: string): Promise<Acknowledged | undefined> {
    const key = replicationMarkKey(this.#space, tag);
    const keepMs = String(10 * this.#timeoutMs);
    const online = Number(await this.#redis.moneyqMarkAndCountReplicas(key, keepMs));
    if (online === 0) return undefined;
    // The key routes WAIT to the key's master: WAIT itself names no key.
    const answers = await this.#redis.pipeline().exists(key).wait(online, this.#timeoutMs).exec();
    const [error, acked] = answers?.[1] ?? [new Error("WAIT got no answer"), 0];
    if (error) throw error;
    return { acked: Number(acked), online };
  }
}

interface Acknowledged {
  readonly acked: number;
  readonly online: number;
}
