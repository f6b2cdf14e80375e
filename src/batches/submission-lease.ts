import type { RedisConnection } from "../redis/connection.js";
import { defineCatalogue } from "../redis/scripts/catalogue.js";

type LeaseRedis = RedisConnection & {
  moneyqRenewLease(key: string, meta: string, token: string, ms: string): Promise<number>;
  moneyqDeleteIfHeld(key: string, token: string): Promise<number>;
};

/**
 * The lease of the one submission that enqueues a batch, taken (SET NX PX) when the
 * submission began. It is renewed on a timer from then until released, every third of its
 * length, whatever the submission is doing, and the batch's `sealBy` with it; a renewal that
 * finds another holder (or none) marks it lost for good. The scripts that write the batch check the lease themselves, so a
 * submission that lost it stops at its next write even before a renewal notices.
 */
export class SubmissionLease {
  readonly #redis: LeaseRedis;
  readonly #key: string;
  readonly #meta: string;
  readonly #token: string;
  readonly #ms: number;
  readonly #timer: NodeJS.Timeout;
  #lost = false;

  /** `keys`: the lease's, and the batch meta's. */
  constructor(
    redis: RedisConnection,
    keys: { readonly lease: string; readonly meta: string },
    token: string,
    ms: number,
  ) {
    defineCatalogue(redis);
    this.#redis = redis as LeaseRedis;
    this.#key = keys.lease;
    this.#meta = keys.meta;
    this.#token = token;
    this.#ms = ms;
    this.#timer = setInterval(() => void this.#renew(), Math.max(1, Math.floor(ms / 3)));
    this.#timer.unref();
  }

  /** True once a renewal found that another submission holds the batch (or none does). */
  get lost(): boolean {
    return this.#lost;
  }

  /** Stops renewing and gives the lease up if this submission still holds it. */
  async release(): Promise<void> {
    clearInterval(this.#timer);
    await this.#redis.moneyqDeleteIfHeld(this.#key, this.#token);
  }

  async #renew(): Promise<void> {
    try {
      const renewed = await this.#redis.moneyqRenewLease(
        this.#key,
        this.#meta,
        this.#token,
        String(this.#ms),
      );
      if (renewed === 0) {
        this.#lost = true;
        clearInterval(this.#timer);
      }
    } catch {
      // Redis did not answer this time: the next renewal tries again, and the writes check the
      // lease themselves.
    }
  }
}
