import { EnqueueValidationError } from "../queues/enqueue-error.js";
import type { JobEnvelope } from "../queues/job-envelope.js";
import type { Producer } from "../queues/producer.js";
import type { RowIssue } from "./batch-errors.js";
import type { BatchKind } from "./batch-kinds.js";
import { type Held, PENDING_BATCH_ID, PENDING_KEY } from "./batch-parts.js";
import type { RawRow, RowSource } from "./batch-rows.js";
import { HeldRows } from "./held-rows.js";
import { columnOf, rowInput } from "./row-input.js";

/*
 * Every check a batch row passes, in the order they run. A row's first failing check is its
 * only issue; the rows that pass them all are enqueued.
 *
 * As each row is read (readRows: one row in memory at a time):
 *   1. shape: an object, no unknown column, each required column, number and JSON cells
 *      (row-input.ts);
 *   2. contract: the rules a job enqueued alone meets, each named by its column
 *      (Producer.envelopeOf);
 *   3. in the file: the reference of an earlier row of the file (a duplicate).
 * Over the rows held, before anything is written (runHeldChecks, with the checks the
 * submission lists in this order; a Redis read per 1,000 rows each):
 *   4. in an earlier batch: a reference another batch of the account holds (a duplicate);
 *   5. key reuse: the row's key holds a different request (key-reuse.ts);
 *   6. repeat: the same payment within the window, under the refuse policy (batch-repeats.ts).
 * Where the rows are written, since another submission may have raced in between
 * (batch-submission.ts):
 *   7. claim: the reference another batch claimed since 4 (a duplicate);
 *   8. send: the key another request took since 5.
 */

/** The rows read: how many, the valid ones held, and the issues of the others. */
export interface Read {
  readonly rows: number;
  readonly held: Held;
  readonly issues: readonly RowIssue[];
}

/** A row that passed checks 1 and 2, or its issues. */
type Checked =
  | { readonly ok: true; readonly reference: string; readonly envelope: JobEnvelope }
  | { readonly ok: false; readonly issues: readonly RowIssue[] };

/**
 * Reads every row of `source` through checks 1 to 3; the rows that pass are held, keyed later
 * (the key and, unless given, the batch id are not known yet).
 */
export async function readRows(
  source: RowSource,
  batch: { readonly kind: BatchKind; readonly account: string; readonly batchId?: string },
  producer: Producer,
): Promise<Read> {
  const issues: RowIssue[] = [];
  const held: Held = new HeldRows();
  const firstRowOf = new Map<string, number>();
  let rows = 0;
  for await (const raw of source.rows) {
    rows = raw.row;
    const checked = checkContract(raw, batch, producer);
    if (!checked.ok) {
      issues.push(...checked.issues);
      continue;
    }
    const first = firstRowOf.get(checked.reference);
    if (first !== undefined) {
      issues.push(inFileDuplicate(raw.row, checked.reference, first));
      continue;
    }
    firstRowOf.set(checked.reference, raw.row);
    held.add(raw.row, checked.reference, checked.envelope.request);
  }
  return { rows, held, issues };
}

/** Checks 1 and 2: the row's shape and cells, then the contract's rules on its envelope. */
function checkContract(
  raw: RawRow,
  batch: { readonly kind: BatchKind; readonly account: string; readonly batchId?: string },
  producer: Producer,
): Checked {
  const pending = {
    account: batch.account,
    batchId: batch.batchId ?? PENDING_BATCH_ID,
    idempotencyKey: PENDING_KEY,
  };
  const converted = rowInput(batch.kind, raw, pending);
  if (!converted.ok) return converted;
  try {
    return {
      ok: true,
      reference: converted.reference,
      envelope: producer.envelopeOf(converted.input),
    };
  } catch (error) {
    if (!(error instanceof EnqueueValidationError)) throw error;
    return {
      ok: false,
      issues: error.issues.map((i) => ({
        type: "invalid",
        row: raw.row,
        reference: converted.reference,
        column: columnOf(i),
        rule: i.rule,
      })),
    };
  }
}

/** Check 3's issue: a reference an earlier row of the file has. */
function inFileDuplicate(row: number, reference: string, first: number): RowIssue {
  return {
    type: "duplicate",
    row,
    reference,
    column: "reference",
    rule: `the same reference as row ${first}`,
  };
}

/** One of checks 4 to 6: the issues, by held index, of the rows among `candidates` it refuses. */
export interface HeldCheck {
  readonly name: string;
  run(candidates: readonly number[]): Promise<ReadonlyMap<number, RowIssue>>;
}

/**
 * Runs `checks` in order over the rows held, each over the rows no earlier one refused; answers
 * the rows left (held indices) and the issues found, in row order with `earlier` (those of the
 * read).
 */
export async function runHeldChecks(
  checks: readonly HeldCheck[],
  held: Held,
  earlier: readonly RowIssue[],
): Promise<{ valid: number[]; issues: RowIssue[] }> {
  let valid = Array.from({ length: held.length }, (_, i) => i);
  const issues = [...earlier];
  for (const check of checks) {
    const refused = await check.run(valid);
    if (refused.size === 0) continue;
    issues.push(...refused.values());
    valid = valid.filter((i) => !refused.has(i));
  }
  issues.sort((a, b) => a.row - b.row);
  return { valid, issues };
}
