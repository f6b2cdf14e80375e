import type { RedisConnection } from "../redis/connection.js";
import { recheckKey, resultsStreamKey, reversalKey } from "../redis/keys.js";
import type { JobResult } from "./job-result.js";
import { LaterEvents, withoutData } from "./later-events.js";

type ReversalRedis = RedisConnection & {
  moneyqRecordReversal(...keysAndArgs: string[]): Promise<number>;
};

/** How a reversal was found: a payout's re-check, or the reconciliation sweep. */
export type ReversalSource = "recheck" | "sweep";

/** A succeeded payout the provider later reversed or returned, as recorded once. */
export interface Reversal {
  readonly jobId: string;
  readonly account: string;
  /** The provider's word for it, when it said one (`REVERSED`, `returned`). */
  readonly status?: string | undefined;
  /** The provider's id of the transaction that reversed it, when it named one. */
  readonly reversedBy?: string | undefined;
  readonly foundAt: string;
  readonly foundBy: ReversalSource;
}

/**
 * The reversals of succeeded payouts: each recorded once per job, as the event `job.reversed`
 * on the results stream (and so as a webhook), with its batch's totals moved; the job's
 * terminal result stays as it was recorded.
 */
export class Reversals extends LaterEvents<ReversalRedis> {
  /**
   * Records that `result`'s payout was reversed; false when it was recorded before. `recheck`
   * is the job's scheduled re-check, ended with it.
   */
  async record(
    result: JobResult,
    found: Omit<Reversal, "jobId" | "account" | "foundAt">,
    recheck = "",
  ): Promise<boolean> {
    const space = this.space;
    const foundAt = new Date().toISOString();
    const reversal: Reversal = { jobId: result.jobId, account: result.account, ...found, foundAt };
    const marker = reversalKey(space, result.account, result.jobId);
    const mark = this.rowMark(result, marker);
    const recorded = await this.redis.moneyqRecordReversal(
      marker,
      resultsStreamKey(space, result.account),
      recheckKey(space, result.account),
      mark.meta,
      mark.rows,
      JSON.stringify(reversal),
      String(this.options.retentionMs),
      String(this.options.maxLen),
      this.eventJson("job.reversed", foundAt, { ...withoutData(result), reversal }),
      mark.row,
      recheck,
      foundAt,
    );
    return recorded === 1;
  }
}
