import { type Job, Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { JobData } from "../processors/job-processor.js";
import type { JobResult } from "../results/job-result.js";
import type { ResultsStore } from "../results/results-store.js";
import { accountQueueName } from "./queue-names.js";

export interface DeadLetter {
  readonly jobId: string;
  readonly account: string;
  readonly kind: string;
  readonly idempotencyKey: string;
  readonly batchId: string | undefined;
  readonly reference: string | undefined;
  readonly failedReason: string;
  /** The job's terminal result (failed, rejected or needs_reconciliation). */
  readonly result: JobResult | undefined;
  readonly failedAt: string | undefined;
}

/**
 * Jobs whose terminal result was not a success stay in their queue's failed set: the dead
 * letters. A replay runs the same job again, with the same data and the same idempotency key.
 */
export class DeadLetters {
  readonly #connection: Redis;
  readonly #prefix: string;
  readonly #results: ResultsStore;

  constructor(connection: Redis, prefix: string, results: ResultsStore) {
    this.#connection = connection;
    this.#prefix = prefix;
    this.#results = results;
  }

  /** Dead letters of `account`, newest first, `start` to `end` inclusive. */
  async list(account: string, start = 0, end = 99): Promise<DeadLetter[]> {
    return this.#withQueue(account, async (queue) => {
      const jobs = (await queue.getFailed(start, end)) as Job<JobData>[];
      return Promise.all(jobs.map((job) => this.#describe(account, job)));
    });
  }

  /** Replays one dead letter; false if `jobId` is not a dead letter of `account`. */
  async replay(account: string, jobId: string): Promise<boolean> {
    return this.#withQueue(account, async (queue) => {
      const job = (await queue.getJob(jobId)) as Job<JobData> | undefined;
      if (!job || !(await job.isFailed())) return false;
      // The replay's outcome becomes the job's new terminal result.
      await this.#results.forget(account, jobId);
      if (job.data.state !== undefined) await job.updateData({ envelope: job.data.envelope });
      await job.retry("failed");
      return true;
    });
  }

  async #describe(account: string, job: Job<JobData>): Promise<DeadLetter> {
    const envelope = job.data?.envelope;
    return {
      jobId: job.id as string,
      account,
      kind: String(envelope?.kind ?? job.name),
      idempotencyKey: String(envelope?.idempotencyKey ?? ""),
      batchId: envelope?.batchId,
      reference: envelope?.reference,
      failedReason: job.failedReason,
      result: await this.#results.get(job.id as string),
      failedAt: job.finishedOn === undefined ? undefined : new Date(job.finishedOn).toISOString(),
    };
  }

  async #withQueue<T>(account: string, use: (queue: Queue) => Promise<T>): Promise<T> {
    const queue = new Queue(accountQueueName(account), {
      connection: this.#connection,
      prefix: this.#prefix,
    });
    try {
      return await use(queue);
    } finally {
      await queue.close();
    }
  }
}
