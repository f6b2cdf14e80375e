import type { Posting, PostingRef } from "./ledger.js";
import type { TransactionRecord } from "./records.js";
import { type SandboxState, walletBalance } from "./sandbox-state.js";

/** What decides a fiat transaction's money: the fields a hand edit or a return may change. */
export type PositionFields = Pick<
  TransactionRecord,
  "type" | "status" | "walletId" | "amountMinor" | "returnedAs" | "hidden"
>;

/**
 * The money a fiat transaction holds in its wallet, as the records now say: a DEBIT holds its
 * amount while PENDING and has paid it once SUCCESSFUL; a CREDIT has credited it once
 * SUCCESSFUL; anything failed, cancelled, returned or hidden holds nothing. The sandbox's own
 * movements (hold, settle, release, reversal) always leave the ledger here.
 */
export function positionOf(t: PositionFields): Posting[] {
  if (t.hidden || t.returnedAs !== undefined) return [];
  const available = walletBalance(t.walletId, "available");
  const held = walletBalance(t.walletId, "held");
  const amount = t.amountMinor;
  if (t.type === "CREDIT")
    return t.status === "SUCCESSFUL" ? [{ balance: available, delta: amount }] : [];
  if (t.status === "PENDING")
    return [
      { balance: available, delta: -amount },
      { balance: held, delta: amount },
    ];
  return t.status === "SUCCESSFUL" ? [{ balance: available, delta: -amount }] : [];
}

/**
 * Moves the ledger from what `before` holds to what `after` holds, all or nothing (a balance
 * that would go negative refuses it with insufficient_funds, and nothing moves).
 */
export function postDifference(
  state: SandboxState,
  before: PositionFields,
  after: PositionFields,
  ref: PostingRef,
): void {
  const deltas = new Map<string, number>();
  for (const p of positionOf(before)) deltas.set(p.balance, (deltas.get(p.balance) ?? 0) - p.delta);
  for (const p of positionOf(after)) deltas.set(p.balance, (deltas.get(p.balance) ?? 0) + p.delta);
  const postings = [...deltas].map(([balance, delta]) => ({ balance, delta }));
  state.ledger.post(postings, ref);
}
