import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { pausedAccountsKey } from "../redis/keys.js";

export interface AccountPause {
  readonly account: string;
  readonly reason: string;
  readonly pausedAt: string;
}

/**
 * Pausing an account stops every worker of every process from taking its jobs (BullMQ's
 * queue pause), and records why, so an operator can see it and resume.
 */
export class AccountPauses {
  readonly #redis: Redis;
  readonly #key: string;
  readonly #queues: ReadonlyMap<string, Queue>;

  constructor(redis: Redis, prefix: string, queues: ReadonlyMap<string, Queue>) {
    this.#redis = redis;
    this.#key = pausedAccountsKey(prefix);
    this.#queues = queues;
  }

  async pause(account: string, reason: string): Promise<void> {
    await this.#queue(account).pause();
    const entry: AccountPause = { account, reason, pausedAt: new Date().toISOString() };
    await this.#redis.hset(this.#key, account, JSON.stringify(entry));
  }

  async resume(account: string): Promise<void> {
    await this.#redis.hdel(this.#key, account);
    await this.#queue(account).resume();
  }

  async list(): Promise<AccountPause[]> {
    const all = await this.#redis.hgetall(this.#key);
    return Object.values(all).map((v) => JSON.parse(v) as AccountPause);
  }

  #queue(account: string): Queue {
    const queue = this.#queues.get(account);
    if (!queue) throw new Error(`unknown account alias ${account}`);
    return queue;
  }
}
