import type { RedisConnection } from "../redis/connection.js";
import { backlogKey, resolutionKey, resolutionTrailKey, resultsStreamKey } from "../redis/keys.js";
import type { JobResult } from "./job-result.js";
import { LaterEvents, withoutData } from "./later-events.js";

/** What a job can be resolved to: the provider made the payment, or did not. */
export type ResolvedAs = "succeeded" | "failed";

/** Who resolved a job: the reconciliation sweep, a lookup (a replay's), or a person. */
export interface Resolver {
  readonly by: "sweep" | "lookup" | "operator";
  /** The operator's token name, for a resolution by hand. */
  readonly name?: string | undefined;
  /** The second person who approved it, where the account's policy asks for one. */
  readonly approvedBy?: string | undefined;
}

/** A job's resolution, as recorded once and kept in the audit trail. */
export interface Resolution {
  readonly jobId: string;
  readonly account: string;
  /** The result recorded before (it stays recorded). */
  readonly from: JobResult["result"];
  readonly to: ResolvedAs;
  readonly resolver: Resolver;
  readonly at: string;
  readonly note?: string | undefined;
  /** The provider's id of the payment, when the evidence names one. */
  readonly upstreamId?: string | undefined;
  /** What showed the outcome: the provider's record as read, or the operator's word. */
  readonly evidence: Readonly<Record<string, unknown>>;
}

/** Results that may be resolved: an outcome left to reconciliation, or a failure. */
export const RESOLVABLE: ReadonlySet<JobResult["result"]> = new Set([
  "needs_reconciliation",
  "failed",
]);

const TRAIL_LENGTH = 100_000;

type ResolutionRedis = RedisConnection & {
  moneyqRecordResolution(...keysAndArgs: string[]): Promise<number>;
};

/**
 * Resolutions of jobs whose outcome moneyq did not know (or recorded as failed), each with its
 * evidence, recorded once as `job.resolved` and in the account's audit trail; the recorded
 * result stays in the history (docs/reconciliation.md, "Resolving exceptions").
 */
export class Resolutions extends LaterEvents<ResolutionRedis> {
  /** Resolves `result`'s job; false when it was resolved before. */
  async resolve(
    result: JobResult,
    resolution: Omit<Resolution, "jobId" | "account" | "from" | "at">,
  ): Promise<boolean> {
    const space = this.space;
    const at = new Date().toISOString();
    const full: Resolution = {
      jobId: result.jobId,
      account: result.account,
      from: result.result,
      at,
      ...resolution,
    };
    const marker = resolutionKey(space, result.account, result.jobId);
    const mark = this.rowMark(result, marker);
    const recorded = await this.redis.moneyqRecordResolution(
      marker,
      resultsStreamKey(space, result.account),
      resolutionTrailKey(space, result.account),
      backlogKey(space, result.account),
      mark.meta,
      mark.rows,
      JSON.stringify(full),
      String(this.options.retentionMs),
      String(this.options.maxLen),
      this.eventJson("job.resolved", at, { ...withoutData(result), resolution: full }),
      result.jobId,
      mark.row,
      result.result === "rejected" ? "failed" : result.result,
      full.to,
      at,
      String(TRAIL_LENGTH),
    );
    return recorded === 1;
  }

  /** The job's resolution, if it has one. */
  async of(account: string, jobId: string): Promise<Resolution | undefined> {
    const raw = await this.redis.get(resolutionKey(this.space, account, jobId));
    return raw === null ? undefined : (JSON.parse(raw) as Resolution);
  }

  /** The account's audit trail of resolutions, newest first. */
  async trail(account: string, count = 100): Promise<Resolution[]> {
    const entries = await this.redis.xrevrange(
      resolutionTrailKey(this.space, account),
      "+",
      "-",
      "COUNT",
      count,
    );
    return entries.map(([, fields]) => JSON.parse(fields[1] as string) as Resolution);
  }
}
