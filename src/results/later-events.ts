import type { RedisConnection } from "../redis/connection.js";
import { batchKeys, type Keyspace } from "../redis/keys.js";
import { redisContext } from "../redis/redis-context.js";
import { newEventId } from "./event-envelope.js";
import type { JobResult } from "./job-result.js";

export interface LaterEventsOptions {
  readonly prefix: string;
  /** How long an event's marker is kept (as a result's). */
  readonly retentionMs: number;
  /** Approximate length the results stream is trimmed to. */
  readonly maxLen: number;
}

/** Where a job's later event marks its batch row; the marker stands in for a job without a batch. */
export interface RowMark {
  readonly meta: string;
  readonly rows: string;
  /** The job's row, '' for none. */
  readonly row: string;
}

/**
 * The base of a job's later events (a reversal, a resolution), each recorded once after its
 * terminal result, which stays as it was recorded: the keyspace, the options, the event's
 * envelope and where it marks the job's batch row.
 */
export abstract class LaterEvents<R extends RedisConnection> {
  protected readonly redis: R;
  protected readonly space: Keyspace;
  protected readonly options: LaterEventsOptions;

  constructor(redis: RedisConnection, options: LaterEventsOptions) {
    this.redis = redis as R;
    this.space = redisContext(redis, options.prefix).space;
    this.options = options;
  }

  /** The event on the results stream (and so a webhook), as JSON. */
  protected eventJson(type: string, timestamp: string, data: Record<string, unknown>): string {
    return JSON.stringify({ type, id: newEventId(), timestamp, data });
  }

  /** The batch row `result`'s event marks, or the marker itself for a job without a batch. */
  protected rowMark(result: JobResult, marker: string): RowMark {
    if (result.batchId === undefined) return { meta: marker, rows: marker, row: "" };
    const batch = batchKeys(this.space, result.account, result.batchId);
    return {
      meta: batch.meta,
      rows: batch.rows,
      row: result.row === undefined ? "" : String(result.row),
    };
  }
}

/** The result as an event carries it: without the provider's raw data. */
export function withoutData(result: JobResult): Omit<JobResult, "upstreamData"> {
  const { upstreamData: _, ...rest } = result;
  return rest;
}
