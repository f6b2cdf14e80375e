import type { RedisConnection } from "../redis/connection.js";
import { defineCatalogue } from "../redis/scripts/catalogue.js";
import type { ResultCode } from "../results/result-codes.js";

/** Why held work was cancelled (a hold's `cancelReason`). */
export type CancelReason = "cancelled" | "rejected" | "approval_expired";
/** Why a batch was cancelled: as held work, or its submission was abandoned unsealed. */
export type BatchCancelReason = CancelReason | "submission_abandoned";

type Ending = { readonly code: ResultCode; readonly message: string };

/** How each way of cancelling ends a job not sent yet: of a batch, or enqueued alone. */
export const CANCELLED_BY: {
  readonly batch: Readonly<Record<BatchCancelReason, Ending>>;
  readonly job: Readonly<Record<CancelReason, Ending>>;
} = {
  batch: {
    submission_abandoned: {
      code: "submission_abandoned",
      message:
        "the batch's submission stopped and was not resumed before its lease ran out; this job was never sent",
    },
    cancelled: {
      code: "batch_cancelled",
      message: "the batch was cancelled before this job was sent",
    },
    rejected: {
      code: "batch_rejected",
      message: "the batch was rejected by its approver; this job was never sent",
    },
    approval_expired: {
      code: "approval_expired",
      message: "the batch's approval expired before anyone approved it; this job was never sent",
    },
  },
  job: {
    cancelled: { code: "job_cancelled", message: "the job was cancelled before it was sent" },
    rejected: {
      code: "job_rejected",
      message: "the job was rejected by its approver; it was never sent",
    },
    approval_expired: {
      code: "approval_expired",
      message: "the job's approval expired before anyone approved it; it was never sent",
    },
  },
};

/**
 * How a cancelled job ends when an earlier attempt of it may have reached the provider
 * (mayHaveBeenSent): no request leaves any more, but "never sent" would be a guess that could
 * make someone pay again.
 */
export const CANCELLED_MAYBE_SENT: Readonly<Record<"batch" | "job", Ending>> = {
  batch: {
    code: "cancelled_maybe_sent",
    message:
      "the batch was cancelled, but an earlier attempt of this job may have reached the provider: check there before sending it again",
  },
  job: {
    code: "cancelled_maybe_sent",
    message:
      "the job was cancelled, but an earlier attempt may have reached the provider: check there before sending it again",
  },
};

/** How long a batch's record of the jobs held while it was unsealed is kept, at most. */
const HELD_RECORD_MS = 24 * 3_600_000;

/** A decision on work awaiting approval (a batch, or a job enqueued alone). */
export type Decision = "approve" | "reject" | "expire";

/** What DECIDE_HELD_WORK answered: the work's new state, or why it could not be decided. */
export type DecisionAnswer =
  | { readonly decided: true; readonly state: string }
  | {
      readonly decided: false;
      readonly reason: "missing" | "not_awaiting" | "expired" | "not_expired" | "own_work";
      readonly state?: string;
    };

/** Where events go: an account's results stream and its length (ResultsStore). */
export interface EventsTarget {
  streamKey(account: string): string;
  readonly maxLen: number;
}

type HoldsRedis = RedisConnection & {
  moneyqDecideHeldWork(
    key: string,
    stream: string,
    decision: string,
    who: string,
    now: string,
    maxLen: string,
    events: string,
  ): Promise<string[]>;
};

/**
 * The holds on work not yet sent, kept in a hash the rate gate reads (a batch's meta, or a
 * job's hold): `approval` pending until decided, `notBeforeMs`, `state` cancelled with its
 * `cancelReason`. Decisions are made by one script on Redis's clock.
 */
export class WorkHolds {
  readonly #redis: HoldsRedis;
  readonly #events: EventsTarget;

  constructor(redis: RedisConnection, events: EventsTarget) {
    defineCatalogue(redis);
    this.#redis = redis as HoldsRedis;
    this.#events = events;
  }

  /**
   * What holds or ended the work whose hold is `key`. `neverSealed`: a batch whose submission
   * never sealed it (it has `sealBy`): the gate held every job of it, so none was ever sent;
   * `unsealed`: such a batch still validating, whose jobs wait for its seal.
   */
  async holdOf(key: string): Promise<{
    approvalPending: boolean;
    notBeforeMs: number;
    cancelReason: string | undefined;
    neverSealed: boolean;
    unsealed: boolean;
  }> {
    const [approval, notBeforeMs, cancelReason, state, sealBy] = await this.#redis.hmget(
      key,
      "approval",
      "notBeforeMs",
      "cancelReason",
      "state",
      "sealBy",
    );
    return {
      approvalPending: approval === "pending",
      notBeforeMs: Number(notBeforeMs ?? 0),
      cancelReason: cancelReason ?? undefined,
      neverSealed: sealBy !== null,
      unsealed: sealBy !== null && state === "validating",
    };
  }

  /**
   * Records in `heldSet` (a batch's, keys.ts `batchKeys().held`) that the gate held job `jobId`
   * while the batch was unsealed, for the seal to release it. Kept a day at most: a batch is
   * sealed or cancelled long before.
   */
  async recordHeld(heldSet: string, jobId: string): Promise<void> {
    const answers = await this.#redis
      .multi()
      .sadd(heldSet, jobId)
      .pexpire(heldSet, HELD_RECORD_MS)
      .exec();
    const failed = answers?.find(([error]) => error !== null)?.[0];
    if (failed) throw failed;
  }

  /**
   * Decides the work of `account` whose hold is `key`, as `who`; its decision's event is
   * `batch.*` or `job.*` as `events` says.
   */
  async decide(
    account: string,
    key: string,
    decision: Decision,
    who: string,
    events: "batch" | "job",
  ): Promise<DecisionAnswer> {
    const [answer, state] = await this.#redis.moneyqDecideHeldWork(
      key,
      this.#events.streamKey(account),
      decision,
      who,
      new Date().toISOString(),
      String(this.#events.maxLen),
      events,
    );
    if (answer === "decided") return { decided: true, state: state as string };
    return {
      decided: false,
      reason: answer as Exclude<DecisionAnswer, { decided: true }>["reason"],
      ...(state !== undefined && { state }),
    };
  }
}
