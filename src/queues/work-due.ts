import type { RedisConnection } from "../redis/connection.js";
import { turnKeys, turnWakeChannel } from "../redis/keys.js";

/**
 * Tells the worker processes that an account has work, and from when: workers run only for
 * accounts with work (src/processors/account-turns.ts). Whoever enqueues, resumes or releases
 * an account's jobs rings, after the jobs are in place. A ring that is lost (Redis away) only
 * delays: the workers also read each idle account's queue now and then.
 */
export class WorkDue {
  readonly #redis: RedisConnection;
  readonly #due: string;
  readonly #wake: string;

  constructor(redis: RedisConnection, prefix: string) {
    this.#redis = redis;
    this.#due = turnKeys(prefix).due;
    this.#wake = turnWakeChannel(prefix);
  }

  /**
   * The account has work due at `at` (ms; default now), or earlier if already told so. Never
   * throws: the work is in place whether or not the ring is heard; false when it was not.
   */
  async ring(account: string, at = Date.now()): Promise<boolean> {
    try {
      await this.#redis.zadd(this.#due, "LT", at, account);
    } catch {
      return false;
    }
    // Work due now is taken at once rather than at the next look (half a second at most).
    if (at <= Date.now()) await this.#redis.publish(this.#wake, account).catch(() => undefined);
    return true;
  }
}
