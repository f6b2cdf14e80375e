import { batchKeys, type Keyspace } from "../redis/keys.js";
import type { JobResult } from "./job-result.js";
import { reportLineOf } from "./report-line.js";

/**
 * What a terminal result writes in its batch, recorded in the same script as the result
 * itself (EMIT_RESULTS): the batch's keys and the row's report line. Undefined for a job
 * outside a batch.
 */
export function batchRowOf(
  space: Keyspace,
  result: JobResult,
): { readonly meta: string; readonly rows: string; readonly line: string } | undefined {
  if (result.batchId === undefined || result.row === undefined) return undefined;
  const keys = batchKeys(space, result.account, result.batchId);
  return { meta: keys.meta, rows: keys.rows, line: JSON.stringify(reportLineOf(result)) };
}
