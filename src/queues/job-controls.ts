import type { Job } from "bullmq";
import { MoneyqError } from "../errors/moneyq-error.js";
import type { RedisConnection } from "../redis/connection.js";
import { jobHoldKey, type Keyspace } from "../redis/keys.js";
import { redisContext } from "../redis/redis-context.js";
import type { ReplicaWaits } from "../redis/replica-waits.js";
import type { ResultsStore } from "../results/results-store.js";
import type { JobData } from "./job-data.js";
import type { Producer } from "./producer.js";
import { CANCELLED_BY, CANCELLED_MAYBE_SENT, type EventsTarget, WorkHolds } from "./work-holds.js";

/** A job that cannot be cancelled or decided, with a stable code. */
export class JobControlError extends MoneyqError {
  readonly code: "job_not_cancellable" | "not_awaiting_approval" | "approval_expired" | "own_job";
  constructor(code: JobControlError["code"], message: string) {
    super(message);
    this.code = code;
  }
}

/** What a cancel or a decision did to a job. */
export interface JobControlReport {
  readonly jobId: string;
  readonly account: string;
  /** `cancelled`: removed before it was sent, with its result; `needs_reconciliation`: removed,
   * but an earlier attempt may have reached the provider (result code `cancelled_maybe_sent`);
   * `in_flight`: a worker holds it (it ends `cancelled` if its request had not left);
   * `released`: approved, it may run. */
  readonly outcome: "cancelled" | "needs_reconciliation" | "in_flight" | "released" | "scheduled";
}

/**
 * Cancel, approve and reject a job enqueued alone. A job's hold (redis/keys.ts, jobHoldKey)
 * is what the rate gate reads before its request leaves: marked cancelled there, a job a
 * worker holds is never sent; approved, a delayed job is released.
 */
export class JobControls {
  readonly #redis: RedisConnection;
  readonly #space: Keyspace;
  readonly #producer: Producer;
  readonly #results: ResultsStore;
  readonly #holds: WorkHolds;
  readonly #retentionMs: number;
  readonly #replicas: ReplicaWaits;

  constructor(options: {
    readonly connection: RedisConnection;
    readonly prefix: string;
    readonly producer: Producer;
    readonly results: ResultsStore & EventsTarget;
    readonly retentionMs: number;
  }) {
    this.#redis = options.connection;
    this.#space = options.results.keyspace;
    this.#producer = options.producer;
    this.#results = options.results;
    this.#holds = new WorkHolds(options.connection, options.results);
    this.#retentionMs = options.retentionMs;
    this.#replicas = redisContext(options.connection, options.prefix).replicas;
  }

  /** The hold of a job (awaiting approval, scheduled, cancelled), or undefined. */
  async holdOf(account: string, jobId: string): Promise<Record<string, string> | undefined> {
    const hold = await this.#redis.hgetall(jobHoldKey(this.#space, account, jobId));
    return Object.keys(hold).length === 0 ? undefined : hold;
  }

  /**
   * Cancels a job not sent yet: marked cancelled in its hold (the gate then never sends it),
   * and removed with a `cancelled` result (`job_cancelled`) unless a worker holds it. A job
   * whose request left and is being confirmed is not cancellable; one an earlier attempt may
   * have sent ends `needs_reconciliation` (`cancelled_maybe_sent`).
   */
  async cancel(account: string, job: Job<JobData>): Promise<JobControlReport> {
    const jobId = job.id as string;
    if ((await this.#results.recorded(account, jobId)) !== undefined)
      throw new JobControlError("job_not_cancellable", `job ${jobId} has its result already`);
    const key = jobHoldKey(this.#space, account, jobId);
    await this.#redis
      .multi()
      .hset(key, {
        jobId,
        account,
        state: "cancelled",
        cancelReason: "cancelled",
        cancelledAt: new Date().toISOString(),
      })
      .pexpire(key, this.#retentionMs)
      .exec();
    // Reported cancelled only once a failover would keep it so: a lost cancel would pay.
    await this.#replicas.ensure(account);
    return this.#removeWithResult(account, job, "cancelled");
  }

  /** Approves a job awaiting approval, as `who` (not the one that enqueued it). */
  async approve(account: string, job: Job<JobData>, who: string): Promise<JobControlReport> {
    const jobId = job.id as string;
    const state = await this.#decide(account, jobId, "approve", who);
    const hold = await this.holdOf(account, jobId);
    const delayMs = Math.max(0, Number(hold?.notBeforeMs ?? 0) - Date.now());
    await this.#producer.release(account, jobId, delayMs);
    return { jobId, account, outcome: state === "scheduled" ? "scheduled" : "released" };
  }

  /** Rejects a job awaiting approval, as `who`: it ends `cancelled` (`job_rejected`). */
  async reject(account: string, job: Job<JobData>, who: string): Promise<JobControlReport> {
    await this.#decide(account, job.id as string, "reject", who);
    return this.#removeWithResult(account, job, "rejected");
  }

  async #decide(
    account: string,
    jobId: string,
    decision: "approve" | "reject",
    who: string,
  ): Promise<string> {
    const answer = await this.#holds.decide(
      account,
      jobHoldKey(this.#space, account, jobId),
      decision,
      who,
      "job",
    );
    if (answer.decided) return answer.state;
    if (answer.reason === "own_work")
      throw new JobControlError(
        "own_job",
        `job ${jobId} was enqueued by this token: another one must decide it`,
      );
    if (answer.reason === "expired")
      throw new JobControlError("approval_expired", `job ${jobId}: its approval expired`);
    throw new JobControlError(
      "not_awaiting_approval",
      `job ${jobId} is ${answer.state ?? "not held"}, not awaiting approval: there is nothing to decide`,
    );
  }

  /**
   * Removes the job if no worker holds it and its request has not left for good (then it can
   * never be sent), recording its result.
   */
  async #removeWithResult(
    account: string,
    job: Job<JobData>,
    reason: "cancelled" | "rejected",
  ): Promise<JobControlReport> {
    const jobId = job.id as string;
    const withdrawal = await this.#producer.withdraw(account, jobId);
    if (withdrawal === "in_flight") return { jobId, account, outcome: "in_flight" };
    if (withdrawal === "sent")
      throw new JobControlError(
        "job_not_cancellable",
        `job ${jobId}'s request was sent already and is being confirmed: its result will say how it ended`,
      );
    const maybeSent = withdrawal === "removed_maybe_sent";
    const { envelope } = job.data;
    const now = new Date();
    await this.#results.emit({
      jobId,
      kind: envelope.kind,
      account,
      idempotencyKey: envelope.idempotencyKey,
      ...(envelope.reference !== undefined && { reference: envelope.reference }),
      ...(maybeSent
        ? { result: "needs_reconciliation", ...CANCELLED_MAYBE_SENT.job }
        : { result: "cancelled", ...CANCELLED_BY.job[reason] }),
      attempts: job.attemptsMade,
      enqueuedAt: new Date(job.timestamp).toISOString(),
      finishedAt: now.toISOString(),
      durationMs: Math.max(0, now.getTime() - job.timestamp),
    });
    return { jobId, account, outcome: maybeSent ? "needs_reconciliation" : "cancelled" };
  }
}
