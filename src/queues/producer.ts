import { type JobsOptions, Queue } from "bullmq";
import type { Redis } from "ioredis";
import { type FieldIssue, validate } from "../contract/field-issues.js";
import { EnqueueValidationError } from "./enqueue-error.js";
import { deriveIdempotencyKey, jobIdFor } from "./idempotency-key.js";
import { type JobEnvelope, JobEnvelopeSchema, type JobInput } from "./job-envelope.js";
import { accountQueueName } from "./queue-names.js";

export interface ProducerOptions {
  /** A connection with `maxRetriesPerRequest: null` (see createRedis). The caller closes it. */
  readonly connection: Redis;
  /** Redis key prefix (config.redisPrefix). */
  readonly prefix: string;
  /** Aliases of the configured accounts; a job for another alias is refused. */
  readonly accounts: readonly string[];
  /** Submissions per job before its outcome is looked up (config.pipeline.maxAttempts). */
  readonly maxAttempts: number;
  /** How long finished jobs are kept (config.pipeline.retentionMs). */
  readonly retentionMs: number;
}

export interface EnqueuedJob {
  readonly jobId: string;
  readonly account: string;
  readonly idempotencyKey: string;
}

/** Jobs of enqueueMany go to Redis in chunks of this many. */
export const ENQUEUE_CHUNK = 500;

/**
 * Enqueues payout, funding and exchange jobs. Each job's key is the caller's or derived from
 * account, batch id and reference; the job id derives from the key, so enqueueing the same
 * work twice is a no-op that returns the same job.
 */
export class Producer {
  readonly #options: ProducerOptions;
  readonly #queues = new Map<string, Queue>();

  constructor(options: ProducerOptions) {
    this.#options = options;
  }

  /** Validates and enqueues one job; throws EnqueueValidationError naming every bad field. */
  async enqueue(input: JobInput): Promise<EnqueuedJob> {
    const [job] = await this.enqueueMany([input]).catch((error: unknown) => {
      if (error instanceof EnqueueValidationError) throw new EnqueueValidationError(error.issues);
      throw error;
    });
    return job as EnqueuedJob;
  }

  /** Validates every job first, then enqueues them all in chunks; nothing is enqueued if one is bad. */
  async enqueueMany(inputs: readonly JobInput[]): Promise<EnqueuedJob[]> {
    return this.enqueueEnvelopes(inputs.map((input, index) => this.envelopeOf(input, index)));
  }

  /**
   * Enqueues envelopes that `envelopeOf` returned (batches validate every row before anything
   * is enqueued, and do not validate twice). Each envelope's job id derives from its key.
   */
  async enqueueEnvelopes(envelopes: readonly JobEnvelope[]): Promise<EnqueuedJob[]> {
    const out: EnqueuedJob[] = [];
    for (let i = 0; i < envelopes.length; i += ENQUEUE_CHUNK) {
      const chunk = envelopes.slice(i, i + ENQUEUE_CHUNK);
      const byAccount = new Map<string, JobEnvelope[]>();
      for (const e of chunk) {
        const list = byAccount.get(e.account);
        if (list) list.push(e);
        else byAccount.set(e.account, [e]);
      }
      for (const [account, list] of byAccount) {
        await this.#queue(account).addBulk(
          list.map((envelope) => ({
            name: envelope.kind,
            data: { envelope },
            opts: this.#jobOptions(envelope),
          })),
        );
      }
      for (const e of chunk)
        out.push({
          jobId: jobIdFor(e.account, e.idempotencyKey),
          account: e.account,
          idempotencyKey: e.idempotencyKey,
        });
    }
    return out;
  }

  /** The job id `input` gets when enqueued (validates it first). */
  jobIdOf(input: JobInput): string {
    const envelope = this.envelopeOf(input);
    return jobIdFor(envelope.account, envelope.idempotencyKey);
  }

  /** The validated envelope of `input`, with its key; throws EnqueueValidationError. */
  envelopeOf(input: JobInput, index?: number): JobEnvelope {
    const issues: FieldIssue[] = [];
    let idempotencyKey = input.idempotencyKey;
    if (idempotencyKey === undefined) {
      if (
        input.batchId !== undefined &&
        input.reference !== undefined &&
        typeof input.account === "string"
      ) {
        idempotencyKey = deriveIdempotencyKey(input.account, input.batchId, input.reference);
      } else {
        issues.push({
          field: "idempotencyKey",
          rule: "required unless batchId and reference are given",
        });
      }
    }
    const parsed = validate(JobEnvelopeSchema, { ...input, idempotencyKey: idempotencyKey ?? "x" });
    if (!parsed.success) issues.push(...parsed.issues);
    if (
      typeof input.account === "string" &&
      !this.#options.accounts.includes(input.account) &&
      parsed.success
    ) {
      issues.push({
        field: "account",
        rule: `no account is configured with alias "${input.account}"`,
      });
    }
    if (issues.length > 0 || !parsed.success) throw new EnqueueValidationError(issues, index);
    return parsed.data as JobEnvelope;
  }

  /** Removes a job no worker holds (BullMQ refuses one that is locked); true if removed. */
  async remove(account: string, jobId: string): Promise<boolean> {
    return (await this.#queue(account).remove(jobId)) === 1;
  }

  /** Closes the queues this producer opened (not the connection). Safe to call twice. */
  async close(): Promise<void> {
    const queues = [...this.#queues.values()];
    this.#queues.clear();
    await Promise.allSettled(queues.map((q) => q.close()));
  }

  #jobOptions(envelope: JobEnvelope): JobsOptions {
    const retentionSeconds = Math.ceil(this.#options.retentionMs / 1000);
    return {
      jobId: jobIdFor(envelope.account, envelope.idempotencyKey),
      attempts: this.#options.maxAttempts,
      backoff: { type: "moneyq" },
      removeOnComplete: { age: retentionSeconds },
      removeOnFail: { age: retentionSeconds },
    };
  }

  #queue(account: string): Queue {
    let queue = this.#queues.get(account);
    if (!queue) {
      queue = new Queue(accountQueueName(account), {
        connection: this.#options.connection,
        prefix: this.#options.prefix,
      });
      this.#queues.set(account, queue);
    }
    return queue;
  }
}
