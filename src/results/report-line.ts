import type { JobResult } from "./job-result.js";

/** A row's line in its batch's results report. */
export interface ReportLine {
  readonly row: number;
  readonly reference: string | undefined;
  readonly idempotencyKey: string | undefined;
  /** A job result, or `queued` (no result yet), `invalid` or `duplicate` (never enqueued). */
  readonly result: string;
  /** The row's currency and amount (decimal text), when it has both: its batch totals count it. */
  readonly currency?: string | undefined;
  readonly amount?: string | undefined;
  readonly upstreamId?: string | undefined;
  readonly upstreamStatus?: string | undefined;
  /** `code: message` of a result that is not a success, or the row's validation issues. */
  readonly error?: string | undefined;
}

/** The report line of a batch row's terminal result. */
export function reportLineOf(result: JobResult): ReportLine {
  return {
    row: result.row ?? 0,
    reference: result.reference,
    idempotencyKey: result.idempotencyKey,
    result: result.result,
    ...(result.upstreamId !== undefined && { upstreamId: result.upstreamId }),
    ...(result.upstreamStatus !== undefined && { upstreamStatus: result.upstreamStatus }),
    ...(result.result !== "succeeded" && {
      error: [result.code, result.message].filter(Boolean).join(": "),
    }),
  };
}
