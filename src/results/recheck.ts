import type { JobResult } from "./job-result.js";

/** What a succeeded payout's re-checks need beyond its result (a payout re-checked: job-kinds). */
export interface RecheckTarget {
  /** A stable withdrawal's sub-account, under which it is looked up. */
  readonly subAccountId?: string | undefined;
  /** Its success already showed a reversal: looked up again at once, where it is recorded. */
  readonly now?: boolean;
}

/**
 * One scheduled re-check of a job (a member of its account's re-checks): the job, its kind,
 * the provider's id, the sub-account of a stable withdrawal, which re-check it is (0 the first),
 * and when the job succeeded (ms), from which every re-check counts.
 */
export interface Recheck {
  readonly j: string;
  readonly k: string;
  readonly id: string;
  readonly s?: string;
  readonly n: number;
  readonly f: number;
  /** Lookups of this re-check that failed so far. */
  readonly a?: number;
}

/** The first re-check of a result, and when it is due; undefined when it gets none. */
export function recheckOf(
  result: JobResult,
  target: RecheckTarget | undefined,
  afterMs: readonly number[],
): { readonly member: string; readonly dueMs: number } | undefined {
  if (result.result !== "succeeded" || target === undefined) return undefined;
  if (result.upstreamId === undefined || afterMs.length === 0) return undefined;
  const f = Date.parse(result.finishedAt);
  const recheck: Recheck = {
    j: result.jobId,
    k: result.kind,
    id: result.upstreamId,
    ...(target.subAccountId !== undefined && { s: target.subAccountId }),
    n: 0,
    f,
  };
  return {
    member: JSON.stringify(recheck),
    dueMs: target.now === true ? f : f + (afterMs[0] as number),
  };
}

/** The re-check after `recheck`, and when it is due; undefined after the last. */
export function nextRecheck(
  recheck: Recheck,
  afterMs: readonly number[],
): { readonly member: string; readonly dueMs: number } | undefined {
  const n = recheck.n + 1;
  const after = afterMs[n];
  if (after === undefined) return undefined;
  const { a: _, ...rest } = recheck;
  return { member: JSON.stringify({ ...rest, n }), dueMs: recheck.f + after };
}
