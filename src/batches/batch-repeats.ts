import type { RepeatPolicy } from "../config/load-config.js";
import { deriveIdempotencyKey, jobIdFor } from "../queues/idempotency-key.js";
import type { JobEnvelope } from "../queues/job-envelope.js";
import { paymentFingerprint } from "../queues/payment-fingerprint.js";
import type { PaymentMatch, PaymentRepeats } from "../queues/payment-repeats.js";
import { repeatRule } from "../queues/repeat-rule.js";
import type { RowIssue } from "./batch-errors.js";
import { BATCH_KINDS, type BatchKind } from "./batch-kinds.js";
import type { HeldRows } from "./held-rows.js";

/** A row whose payment repeats others: paid or queued in the window, or a row of the same file. */
export interface RowRepeat {
  readonly row: number;
  readonly reference: string;
  /** The other payments, newest first (at most 5), and an earlier row of the same file. */
  readonly matches: readonly PaymentMatch[];
}

/** What a submission says of its repeated payments: the account's policy and every such row. */
export interface RepeatReport {
  readonly policy: RepeatPolicy;
  /** How far back payments are looked for (ms). */
  readonly windowMs: number;
  /** How many rows repeat a payment. */
  readonly count: number;
  /** The rows, in row order (a status keeps the first MAX_KEPT). */
  readonly rows: readonly RowRepeat[];
}

/** A batch's meta keeps this many repeated rows to show its approvers; `count` says how many. */
const MAX_KEPT = 1_000;

type Held = HeldRows<JobEnvelope["request"]>;

/**
 * The held rows among `indices` whose payment repeats another one, by index: one paid, queued
 * or unconfirmed under another key in the account's window (not a row of this batch), or an
 * earlier row of this file with the same payment.
 */
export async function batchRepeats(
  repeats: PaymentRepeats,
  batch: { readonly account: string; readonly batchId: string; readonly kind: BatchKind },
  held: Held,
  indices: readonly number[],
): Promise<Map<number, PaymentMatch[]>> {
  const { account, batchId } = batch;
  const jobKind = BATCH_KINDS[batch.kind].jobKind;
  const probes: { index: number; digest: string; jobId: string; batchId: string }[] = [];
  for (const index of indices) {
    const digest = paymentFingerprint(jobKind, held.value(index));
    if (digest === undefined) continue;
    const key = deriveIdempotencyKey(account, batchId, held.reference(index));
    probes.push({ index, digest, jobId: jobIdFor(account, key), batchId });
  }
  const found = await repeats.find(account, probes);
  const out = new Map<number, PaymentMatch[]>();
  const firstRowOf = new Map<string, number>();
  probes.forEach((probe, n) => {
    const matches = [...(found[n] ?? [])];
    const first = firstRowOf.get(probe.digest);
    if (first === undefined) firstRowOf.set(probe.digest, held.row(probe.index));
    else matches.push({ state: "in_file", row: first });
    if (matches.length > 0) out.set(probe.index, matches);
  });
  return out;
}

/** The report of the repeated rows `found` (by held index), in row order. */
export function repeatReport(
  policy: { readonly policy: RepeatPolicy; readonly windowMs: number },
  held: Held,
  found: ReadonlyMap<number, readonly PaymentMatch[]>,
): RepeatReport {
  const rows = [...found]
    .map(([i, matches]) => ({ row: held.row(i), reference: held.reference(i), matches }))
    .sort((a, b) => a.row - b.row);
  return { policy: policy.policy, windowMs: policy.windowMs, count: rows.length, rows };
}

/** A repeated row refused by its account's `refuse` policy. */
export function repeatIssue(
  held: Held,
  index: number,
  matches: readonly PaymentMatch[],
  window: string,
): RowIssue {
  return {
    type: "invalid",
    row: held.row(index),
    reference: held.reference(index),
    // No one column: the payment is its beneficiary's columns, amount and currency together.
    column: "",
    rule: repeatRule(matches, "refuse", window),
  };
}

/** The meta field that keeps a batch's repeat report for its approvers (the first rows). */
export function repeatMetaFields(report: RepeatReport): Record<string, string> {
  if (report.count === 0) return {};
  return { repeats: JSON.stringify({ ...report, rows: report.rows.slice(0, MAX_KEPT) }) };
}

/** A batch's repeat report as its meta keeps it, if it has one. */
export function repeatsOfMeta(meta: Readonly<Record<string, string>>): RepeatReport | undefined {
  if (meta.repeats === undefined) return undefined;
  try {
    return JSON.parse(meta.repeats) as RepeatReport;
  } catch {
    return undefined;
  }
}
