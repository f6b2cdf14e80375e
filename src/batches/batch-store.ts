import { type Decision, type EventsTarget, WorkHolds } from "../queues/work-holds.js";
import type { RedisConnection } from "../redis/connection.js";
import {
  batchIndexKey,
  batchKeys,
  type Keyspace,
  unsealedAccountsKey,
  unsealedBatchesKey,
} from "../redis/keys.js";
import { redisContext } from "../redis/redis-context.js";
import { CANCELLABLE_BATCH_STATES } from "../redis/scripts/lua-constants.js";
import {
  BatchDecisionError,
  BatchNotCancellableError,
  BatchNotFoundError,
} from "./batch-errors.js";

export const BATCH_STATES = [
  "validating",
  "submission_failed",
  "awaiting_approval",
  "scheduled",
  "queued",
  "running",
  "completed",
  "completed_with_failures",
  "cancelled",
] as const;
export type BatchState = (typeof BATCH_STATES)[number];

/** The meta's field set once an approved batch's jobs were all released. */
const RELEASED_FIELD = "releasedAt";

/** What beginning a submission found (BEGIN_BATCH_SUBMIT). */
export type BeginOutcome = "reused" | "submitted" | "busy" | "created" | "resumed";

/** Whether a batch in `state` can still be cancelled. */
export function isCancellable(state: string): boolean {
  return (CANCELLABLE_BATCH_STATES as readonly string[]).includes(state);
}

type BatchRedis = RedisConnection & {
  moneyqBeginSubmit(
    meta: string,
    lease: string,
    index: string,
    unsealed: string,
    token: string,
    ms: string,
    digest: string,
    batchId: string,
    createdMs: string,
    ...fields: string[]
  ): Promise<string>;
  moneyqSetRows(
    key: string,
    lease: string,
    token: string,
    ...fieldsAndValues: string[]
  ): Promise<number>;
  moneyqBatchQueued(
    key: string,
    lease: string,
    stream: string,
    unsealed: string,
    now: string,
    token: string,
    maxLen: string,
    batchId: string,
  ): Promise<string>;
  moneyqAbandonSubmission(
    key: string,
    lease: string,
    stream: string,
    now: string,
    maxLen: string,
  ): Promise<string>;
  moneyqCancelBatch(
    key: string,
    stream: string,
    now: string,
    maxLen: string,
  ): Promise<string | null>;
};

/**
 * The state of each batch, in its meta hash, and the moves between states:
 *
 * - `validating`: written when a submission begins (`begin`), while it enqueues the rows. Until
 *   the submission seals it (`queued`), the rate gate holds its jobs; reported as
 *   `submission_failed` (never stored) while no submission holds its lease, and cancelled
 *   (`abandon`, reason `submission_abandoned`) once its `sealBy` has passed so;
 * - `awaiting_approval`: every accepted row enqueued, held until the batch is approved
 *   (`queued`; then `decide`: approved, rejected, or its approval expired);
 * - `scheduled`: every accepted row enqueued, held until its `notBefore` (`queued`, `decide`);
 * - `queued`: every accepted row enqueued (`queued`, `decide`);
 * - `running`: the first result came in (EMIT_RESULTS);
 * - `completed` or `completed_with_failures`: every accepted row has its result (EMIT_RESULTS,
 *   or `queued` when the results came in before validation ended);
 * - `cancelled`: cancelled before it finished (`cancel`), rejected, or its approval expired
 *   (`decide`); a job of a cancelled batch takes no slot (RESERVE_SLOTS), and the batch
 *   finishes once the rest of its results are in, still `cancelled`.
 *
 * Each move that has an event appends it to the results stream in the same script.
 *
 * The completion rule and the cancellable states are written once, in redis/scripts/includes/
 * and redis/scripts/lua-constants.ts, and every script that moves a batch includes them.
 */
export class BatchStore {
  readonly #redis: BatchRedis;
  readonly keyspace: Keyspace;
  readonly #events: EventsTarget;
  readonly #holds: WorkHolds;

  constructor(redis: RedisConnection, prefix: string, events: EventsTarget) {
    this.#redis = redis as BatchRedis;
    this.keyspace = redisContext(redis, prefix).space;
    this.#events = events;
    this.#holds = new WorkHolds(redis, events);
  }

  keys(account: string, batchId: string): ReturnType<typeof batchKeys> {
    return batchKeys(this.keyspace, account, batchId);
  }

  /**
   * Begins a submission holding the batch's lease for `leaseMs` under `token`; a new batch's
   * meta is written from `meta` (state `validating`).
   */
  async begin(
    account: string,
    batchId: string,
    lease: { readonly token: string; readonly ms: number },
    digest: string,
    meta: Readonly<Record<string, string | number>>,
  ): Promise<BeginOutcome> {
    const keys = this.keys(account, batchId);
    const fields = Object.entries(meta).flatMap(([field, value]) => [field, String(value)]);
    const outcome = (await this.#redis.moneyqBeginSubmit(
      keys.meta,
      keys.submitting,
      batchIndexKey(this.keyspace, account),
      unsealedBatchesKey(this.keyspace, account),
      lease.token,
      String(lease.ms),
      digest,
      batchId,
      String(Date.parse(String(meta.createdAt)) || Date.now()),
      ...fields,
    )) as BeginOutcome;
    // After the batch is in the account's unsealed batches: see `unlistUnsealed`. A listing
    // that fails only waits for the sweep's next pass over every account.
    await this.listUnsealed(account).catch(() => undefined);
    return outcome;
  }

  /**
   * Sets each row's report line unless it has one, while `token` holds the batch's lease;
   * false (nothing written) once it does not. `lines`: pairs of row number and line.
   */
  async setRows(
    account: string,
    batchId: string,
    token: string,
    lines: readonly string[],
  ): Promise<boolean> {
    const keys = this.keys(account, batchId);
    return (await this.#redis.moneyqSetRows(keys.rows, keys.submitting, token, ...lines)) === 1;
  }

  /**
   * Ends validation: the batch is queued, or finished if every row has its result already.
   * `lost` (nothing changed) when `token` no longer holds the batch's lease.
   */
  async queued(account: string, batchId: string, token: string): Promise<BatchState | "lost"> {
    const keys = this.keys(account, batchId);
    const now = new Date().toISOString();
    return (await this.#redis.moneyqBatchQueued(
      keys.meta,
      keys.submitting,
      this.#events.streamKey(account),
      unsealedBatchesKey(this.keyspace, account),
      now,
      token,
      String(this.#events.maxLen),
      batchId,
    )) as BatchState | "lost";
  }

  /**
   * Cancels the batch if its submission was abandoned (ABANDON_SUBMISSION); answers
   * `abandoned`, or why not.
   */
  async abandon(
    account: string,
    batchId: string,
  ): Promise<"abandoned" | "missing" | "sealed" | "live" | "not_due"> {
    const keys = this.keys(account, batchId);
    return (await this.#redis.moneyqAbandonSubmission(
      keys.meta,
      keys.submitting,
      this.#events.streamKey(account),
      new Date().toISOString(),
      String(this.#events.maxLen),
    )) as "abandoned" | "missing" | "sealed" | "live" | "not_due";
  }

  /** The account's unsealed batches (BEGIN_BATCH_SUBMIT adds them), oldest first, `count` at most. */
  unsealed(account: string, count: number): Promise<string[]> {
    return this.#redis.zrange(unsealedBatchesKey(this.keyspace, account), 0, String(count - 1));
  }

  /** The accounts that may have unsealed batches. */
  listedUnsealed(): Promise<string[]> {
    return this.#redis.smembers(unsealedAccountsKey(this.keyspace.prefix));
  }

  /** Lists an account found with unsealed batches (begun by a release that did not list it). */
  async listUnsealed(account: string): Promise<void> {
    await this.#redis.sadd(unsealedAccountsKey(this.keyspace.prefix), account);
  }

  /**
   * Unlists an account found without unsealed batches, unless one was begun meanwhile: `begin`
   * lists after its batch is in place, so a batch either is seen by the read after the
   * removal, or is listed after it.
   */
  async unlistUnsealed(account: string): Promise<void> {
    await this.#redis.srem(unsealedAccountsKey(this.keyspace.prefix), account);
    if ((await this.unsealed(account, 1)).length > 0) await this.listUnsealed(account);
  }

  /** Takes the batch out of its account's unsealed batches: sealed, or cancelled and cleared. */
  async forgetUnsealed(account: string, batchId: string): Promise<void> {
    await this.#redis.zrem(unsealedBatchesKey(this.keyspace, account), batchId);
  }

  /** Whether a submission holds the batch's lease. */
  async leaseHeld(account: string, batchId: string): Promise<boolean> {
    return (await this.#redis.exists(this.keys(account, batchId).submitting)) === 1;
  }

  /**
   * Marks the batch cancelled; answers the state it had. BatchNotFoundError if the account has
   * no such batch, BatchNotCancellableError if it had finished.
   */
  async cancel(account: string, batchId: string): Promise<BatchState> {
    const keys = this.keys(account, batchId);
    const before = await this.#redis.moneyqCancelBatch(
      keys.meta,
      this.#events.streamKey(account),
      new Date().toISOString(),
      String(this.#events.maxLen),
    );
    if (before === null) throw new BatchNotFoundError(batchId);
    if (!isCancellable(before)) throw new BatchNotCancellableError(batchId, before);
    return before as BatchState;
  }

  /**
   * Decides a batch awaiting approval (DECIDE_HELD_WORK); answers its new state.
   * BatchNotFoundError if the account has no such batch; BatchDecisionError if it is not
   * awaiting approval, its approval expired, or `who` submitted it. `expire` answers undefined
   * while the approval has not expired.
   */
  async decide(
    account: string,
    batchId: string,
    decision: Decision,
    who: string,
  ): Promise<BatchState | undefined> {
    const answer = await this.#holds.decide(
      account,
      this.keys(account, batchId).meta,
      decision,
      who,
      "batch",
    );
    if (answer.decided) return answer.state as BatchState;
    if (answer.reason === "missing") throw new BatchNotFoundError(batchId);
    if (answer.reason === "not_expired") return undefined;
    throw new BatchDecisionError(
      batchId,
      answer.reason === "own_work" ? "own_batch" : answer.reason,
      answer.state,
    );
  }

  /**
   * Records that every job of the approved batch was released (`releasedAt`): an approval
   * repeated after it releases nothing. Only on a batch that exists.
   */
  async markReleased(account: string, batchId: string): Promise<void> {
    const meta = this.keys(account, batchId).meta;
    await this.#redis.hsetnx(meta, RELEASED_FIELD, new Date().toISOString());
  }

  /** Whether every job of the approved batch was released (markReleased). */
  async released(account: string, batchId: string): Promise<boolean> {
    return (await this.#redis.hexists(this.keys(account, batchId).meta, RELEASED_FIELD)) === 1;
  }

  /** The batch's meta hash as stored ({} when there is none). */
  meta(account: string, batchId: string): Promise<Record<string, string>> {
    return this.#redis.hgetall(this.keys(account, batchId).meta);
  }
}
