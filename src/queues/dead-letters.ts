import { randomUUID } from "node:crypto";
import type { Job, Queue } from "bullmq";
import { jobKeyOf } from "../redis/bullmq-internals.js";
import type { RedisConnection } from "../redis/connection.js";
import { type Keyspace, replayLockKey, SENT_FIELD } from "../redis/keys.js";
import { redisContext } from "../redis/redis-context.js";
import { JobResult } from "../results/job-result.js";
import type { ResultsStore } from "../results/results-store.js";
import { AccountQueues } from "./account-queues.js";
import { jobIdFor } from "./idempotency-key.js";
import type { JobData, JobState } from "./job-data.js";
import { LANE_PRIORITY } from "./lanes.js";
import { ReplayConflictError } from "./replay-conflict-error.js";
import { WorkDue } from "./work-due.js";

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

/** What a search of dead letters matches: a job's reference, its idempotency key, or both. */
export interface DeadLetterMatch {
  readonly reference?: string | undefined;
  readonly idempotencyKey?: string | undefined;
}

/** A search by reference looks at this many of the newest dead letters, at most. */
export const MAX_DEAD_LETTERS_SEARCHED = 10_000;
const SEARCH_PAGE = 500;

/** How long a replay holds its job against concurrent replays, at most. */
const REPLAY_LOCK_MS = 30_000;

type ReplayRedis = RedisConnection & {
  moneyqDeleteIfHeld(lock: string, token: string): Promise<number>;
};

/**
 * Jobs whose terminal result was not a success stay in their queue's failed set: the dead
 * letters. A replay runs the same job again, with the same data and the same idempotency key.
 */
export class DeadLetters {
  readonly #connection: ReplayRedis;
  readonly #prefix: string;
  readonly #space: Keyspace;
  readonly #results: ResultsStore;
  readonly #queues: AccountQueues | undefined;

  /** Without `queues`, each call opens the account's queue for itself and closes it after. */
  constructor(
    connection: RedisConnection,
    prefix: string,
    results: ResultsStore,
    queues?: AccountQueues,
  ) {
    this.#connection = connection as ReplayRedis;
    this.#prefix = prefix;
    this.#space = redisContext(connection, prefix).space;
    this.#results = results;
    this.#queues = queues;
  }

  /** Dead letters of `account`, newest first, `start` to `end` inclusive. */
  async list(account: string, start = 0, end = 99): Promise<DeadLetter[]> {
    return this.#withQueue(account, async (queue) => {
      const jobs = await queue.getFailed(start, end);
      return Promise.all(jobs.map((job) => this.#describe(account, job)));
    });
  }

  /**
   * Dead letters of `account` matching `match`, newest first, at most `limit`. A key names one
   * job (its id derives from account and key); a reference is looked for among the newest
   * MAX_DEAD_LETTERS_SEARCHED.
   */
  async find(account: string, match: DeadLetterMatch, limit: number): Promise<DeadLetter[]> {
    const matches = (job: Job<JobData>) =>
      (match.reference === undefined || job.data?.envelope?.reference === match.reference) &&
      (match.idempotencyKey === undefined ||
        job.data?.envelope?.idempotencyKey === match.idempotencyKey);
    return this.#withQueue(account, async (queue) => {
      const found: Job<JobData>[] = [];
      if (match.idempotencyKey !== undefined) {
        const job = await queue.getJob(jobIdFor(account, match.idempotencyKey));
        if (job && matches(job) && (await job.getState()) === "failed") found.push(job);
      } else {
        for (let start = 0; start < MAX_DEAD_LETTERS_SEARCHED && found.length < limit; ) {
          const page = await queue.getFailed(start, start + SEARCH_PAGE - 1);
          found.push(...page.filter(matches));
          if (page.length < SEARCH_PAGE) break;
          start += SEARCH_PAGE;
        }
      }
      return Promise.all(found.slice(0, limit).map((job) => this.#describe(account, job)));
    });
  }

  /**
   * Replays one dead letter; false if `jobId` is not a job of `account`. Of concurrent replays
   * of one job one goes ahead; the others, and any replay of a job that is not failed, throw
   * ReplayConflictError. Only the result the job had when the replay began is forgotten.
   *
   * A job of a kind without an idempotency key whose request was sent (the gate's "sent"
   * record) is replayed only when its result proves nothing was created (`failed` or
   * `rejected`: a definite refusal); the replay then drops the record and sends again. Any other
   * result (`needs_reconciliation`: the request may have had its effect) refuses the replay: a
   * resend could create a second resource; such a job is reconciled with the provider instead.
   * The replayed job goes back to the lane it was enqueued in.
   *
   * `before`, run under the replay's hold once the job is known to be a dead letter, may stop
   * the replay with a value of its own (a lookup at the provider that found the payment made):
   * the replay then answers `{ stopped }` and sends nothing.
   */
  async replay<S>(
    account: string,
    jobId: string,
    before?: (job: Job<JobData>) => Promise<S | undefined>,
  ): Promise<boolean | { readonly stopped: S }> {
    const lock = replayLockKey(this.#space, account, jobId);
    const token = randomUUID();
    if ((await this.#connection.set(lock, token, "PX", REPLAY_LOCK_MS, "NX")) === null)
      throw new ReplayConflictError(jobId, "another replay of it is under way");
    try {
      return await this.#withQueue(account, async (queue) => {
        const job = await queue.getJob(jobId);
        if (!job) return false;
        const state = await job.getState();
        if (state !== "failed")
          throw new ReplayConflictError(jobId, `it is ${state}, not a dead letter`);
        const stopped = before === undefined ? undefined : await before(job);
        if (stopped !== undefined) return { stopped };
        // The replay's outcome becomes the job's new terminal result.
        // The gate's record, or the mark earlier releases kept in the job's state.
        const sent =
          (await this.#connection.hexists(jobKeyOf(job), SENT_FIELD)) === 1 ||
          job.data.state?.sentAt !== undefined;
        const recorded = await this.#results.recorded(account, jobId);
        if (sent) {
          const result = recorded === undefined ? undefined : resultOf(recorded);
          if (result !== "failed" && result !== "rejected")
            throw new ReplayConflictError(
              jobId,
              `its request was sent and its result (${result ?? "none"}) does not prove that ` +
                "nothing was created; this kind has no idempotency key, so a resend could " +
                "create a second one: reconcile it with the provider instead",
            );
        }
        if (recorded !== undefined && !(await this.#results.forget(account, jobId, recorded)))
          throw new ReplayConflictError(jobId, "its result changed while the replay began");
        // A definite refusal: nothing was created, so the request may be sent again.
        if (sent) await this.#connection.hdel(jobKeyOf(job), SENT_FIELD);
        if (job.data.state !== undefined)
          await job.updateData({
            envelope: job.data.envelope,
            ...replayedState(job.data.state, sent),
          });
        await this.#retry(job);
        // BullMQ puts a retried job in the wait list, ahead of every lane, and its priority is
        // the lookup lane's if it was confirming: back to the lane it was enqueued in.
        const envelope = job.data.envelope;
        const lane = envelope.priority ?? (envelope.batchId === undefined ? "urgent" : "bulk");
        await job.changePriority({ priority: LANE_PRIORITY[lane] });
        return true;
      });
    } finally {
      await this.#connection.moneyqDeleteIfHeld(lock, token);
    }
  }

  /**
   * Retries the failed job. Something outside this class (BullMQ's own retry, a removal) may
   * have moved it since its state was read: BullMQ then refuses, and that is a conflict.
   */
  async #retry(job: Job<JobData>): Promise<void> {
    try {
      await job.retry("failed");
      await new WorkDue(this.#connection, this.#prefix).ring(job.data.envelope.account);
    } catch (error) {
      const state = await job.getState().catch(() => "unknown");
      if (state === "failed") throw error;
      throw new ReplayConflictError(job.id as string, `it is ${state}, not a dead letter`);
    }
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
      result: await this.#results.get(account, job.id as string),
      failedAt: job.finishedOn === undefined ? undefined : new Date(job.finishedOn).toISOString(),
    };
  }

  async #withQueue<T>(account: string, use: (queue: Queue<JobData>) => Promise<T>): Promise<T> {
    if (this.#queues) return use(this.#queues.get(account));
    const own = new AccountQueues(this.#connection, this.#prefix);
    try {
      return await use(own.get(account));
    } finally {
      await own.close();
    }
  }
}

/** The result kind of a result as stored; undefined if it cannot be read. */
function resultOf(recorded: string): string | undefined {
  try {
    return JobResult.parse(JSON.parse(recorded)).result;
  } catch {
    return undefined;
  }
}

/**
 * What a replayed job keeps of its state: it submits again from the start, but if a request of
 * it may have reached the provider, the provider's refusal of the resend (a balance the first
 * send spent, a key it no longer knows) must not read as "nothing was paid". A kind without a
 * key replays only after a definite refusal (`sent` then dropped), so it starts clean.
 */
function replayedState(state: JobState, sent: boolean): { state?: JobState } {
  const mayHaveReached = !sent && (state.possiblySent === true || state.phase !== "submit");
  return mayHaveReached ? { state: { phase: "submit", possiblySent: true } } : {};
}
