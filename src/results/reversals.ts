import type { RedisConnection } from "../redis/connection.js";
import {
  batchKeys,
  type Keyspace,
  recheckKey,
  resultsStreamKey,
  reversalKey,
} from "../redis/keys.js";
import { redisContext } from "../redis/redis-context.js";
import { newEventId } from "./event-envelope.js";
import type { JobResult } from "./job-result.js";

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

export interface ReversalsOptions {
  readonly prefix: string;
  /** How long a reversal's marker is kept (as a result's). */
  readonly retentionMs: number;
  /** Approximate length the results stream is trimmed to. */
  readonly maxLen: number;
}

/**
 * The reversals of succeeded payouts: each recorded once per job, as the event `job.reversed`
 * on the results stream (and so as a webhook), with its batch's totals moved; the job's
 * terminal result stays as it was recorded.
 */
export class Reversals {
  readonly #redis: ReversalRedis;
  readonly #space: Keyspace;
  readonly #options: ReversalsOptions;

  constructor(redis: RedisConnection, options: ReversalsOptions) {
    this.#redis = redis as ReversalRedis;
    this.#space = redisContext(redis, options.prefix).space;
    this.#options = options;
  }

  /**
   * Records that `result`'s payout was reversed; false when it was recorded before. `recheck`
   * is the job's scheduled re-check, ended with it.
   */
  async record(
    result: JobResult,
    found: Omit<Reversal, "jobId" | "account" | "foundAt">,
    recheck = "",
  ): Promise<boolean> {
    const space = this.#space;
    const foundAt = new Date().toISOString();
    const reversal: Reversal = { jobId: result.jobId, account: result.account, ...found, foundAt };
    const marker = reversalKey(space, result.account, result.jobId);
    const batch =
      result.batchId === undefined ? undefined : batchKeys(space, result.account, result.batchId);
    const event = {
      type: "job.reversed",
      id: newEventId(),
      timestamp: foundAt,
      data: { ...withoutData(result), reversal },
    };
    const recorded = await this.#redis.moneyqRecordReversal(
      marker,
      resultsStreamKey(space, result.account),
      recheckKey(space, result.account),
      batch?.meta ?? marker,
      batch?.rows ?? marker,
      JSON.stringify(reversal),
      String(this.#options.retentionMs),
      String(this.#options.maxLen),
      JSON.stringify(event),
      batch !== undefined && result.row !== undefined ? String(result.row) : "",
      recheck,
      foundAt,
    );
    return recorded === 1;
  }
}

/** The result as an event carries it: without the provider's raw data, which a success lacks. */
function withoutData(result: JobResult): Omit<JobResult, "upstreamData"> {
  const { upstreamData: _, ...rest } = result;
  return rest;
}
