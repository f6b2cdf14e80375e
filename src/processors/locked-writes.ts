import type { Job } from "bullmq";
import { MoneyqError } from "../errors/moneyq-error.js";
import { jobKeyOf, lockKeyOf } from "../redis/bullmq-internals.js";
import type { RedisConnection } from "../redis/connection.js";
import { defineCatalogue } from "../redis/scripts/catalogue.js";

type WritingRedis = RedisConnection & {
  moneyqWriteJobData(
    jobKey: string,
    lock: string,
    sentKey: string,
    token: string,
    data: string,
    priority: string,
    dropSent: string,
  ): Promise<number>;
};

/** Thrown when this worker no longer holds the job: it stops, and does nothing more for it. */
export class LockLostError extends MoneyqError {
  readonly code = "lock_lost";
  constructor(jobId: string | undefined) {
    super(`job ${jobId}: this worker no longer holds its lock; another worker owns the job`);
  }
}

/** Writes a job's data only while this worker holds its lock (WRITE_JOB_DATA). */
export class LockedWrites {
  readonly #redis: WritingRedis;

  constructor(redis: RedisConnection) {
    defineCatalogue(redis);
    this.#redis = redis as WritingRedis;
  }

  /** Sets `job.data` to `data` if `token` holds the job; throws LockLostError otherwise. */
  async write<T>(
    job: Job<T>,
    token: string | undefined,
    data: T,
    options: { priority?: number; dropSent?: string } = {},
  ): Promise<void> {
    const lockKey = lockKeyOf(job);
    const written = await this.#redis.moneyqWriteJobData(
      jobKeyOf(job),
      lockKey,
      options.dropSent ?? lockKey,
      token ?? "",
      JSON.stringify(data),
      options.priority === undefined ? "" : String(options.priority),
      options.dropSent === undefined ? "0" : "1",
    );
    if (written !== 1) throw new LockLostError(job.id);
    job.data = data;
    if (options.priority !== undefined) job.priority = options.priority;
  }
}
