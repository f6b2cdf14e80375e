import type { ReversalStyle } from "./options.js";
import type { TransactionRecord } from "./records.js";
import { SandboxError } from "./sandbox-error.js";
import { type SandboxState, walletBalance } from "./sandbox-state.js";
import { postDifference } from "./transaction-position.js";
import { contextOf, newTransaction, refOf } from "./transaction-records.js";

/** What became of a scheduled reversal when it came due. */
export type ReversalOutcome =
  | { readonly reversed: true; readonly reversal: TransactionRecord | undefined }
  | { readonly reversed: false; readonly reason: string };

/** Why `t` cannot be reversed now ("is PENDING; ..."), or undefined when it can. */
export function reversalRefusal(state: SandboxState, t: TransactionRecord): string | undefined {
  if (t.hidden) return "is hidden (as if the provider never had it); show it again first";
  if (t.reversedBy !== undefined) return `is already reversed by ${t.reversedBy}`;
  if (t.returnedAs !== undefined) return `is already returned (its status shows ${t.returnedAs})`;
  if (t.reversalDueAt !== undefined)
    return `already has a reversal due at ${state.clock.iso(t.reversalDueAt)}`;
  if (t.status !== "SUCCESSFUL")
    return `is ${t.status}; only a SUCCESSFUL transaction can be reversed`;
  return undefined;
}

/**
 * Reverses `t` now: as a new opposite transaction (answered), or as a status change of `t`
 * itself. Either way its money goes back, as the same effect of the same key.
 */
export function reverseNow(
  state: SandboxState,
  t: TransactionRecord,
  style: ReversalStyle,
): TransactionRecord | undefined {
  if (style === "transaction") return reverseAsTransaction(state, t);
  returnAsStatus(state, t);
  return undefined;
}

/**
 * Reverses `t` when the sandbox's clock reaches `dueAt` (ms), if it can still be reversed then
 * (a hand edit may have changed it); `onDue` hears what became of it.
 */
export function scheduleReversal(
  state: SandboxState,
  t: TransactionRecord,
  dueAt: number,
  style: ReversalStyle,
  onDue: (outcome: ReversalOutcome) => void = () => {},
): void {
  t.reversalDueAt = dueAt;
  state.scheduleAt(dueAt, () => {
    t.reversalDueAt = undefined;
    const refusal = reversalRefusal(state, t);
    if (refusal !== undefined) return onDue({ reversed: false, reason: `it ${refusal}` });
    try {
      onDue({ reversed: true, reversal: reverseNow(state, t, style) });
    } catch (error) {
      // Only a CREDIT's reversal takes money, which the wallet may no longer hold.
      if (!(error instanceof SandboxError && error.code === "insufficient_funds")) throw error;
      onDue({ reversed: false, reason: `the ${t.currency} wallet cannot cover it` });
    }
  });
}

/** A new opposite transaction with `reversalOf`, and `reversedBy` on the original. */
function reverseAsTransaction(state: SandboxState, original: TransactionRecord): TransactionRecord {
  const reversal = newTransaction(
    state,
    contextOf(state, original.accountId, original.idempotencyKey),
    {
      walletId: original.walletId,
      type: original.type === "DEBIT" ? "CREDIT" : "DEBIT",
      channel: original.channel,
      amountMinor: original.amountMinor,
      currency: original.currency,
      narration: `reversal of ${original.transactionId}`,
      reversalOf: original.transactionId,
      status: "SUCCESSFUL",
    },
  );
  const sign = original.type === "DEBIT" ? 1 : -1;
  state.ledger.post(
    [
      {
        balance: walletBalance(original.walletId, "available"),
        delta: sign * original.amountMinor,
      },
    ],
    refOf(state, reversal, original.transactionId, `reversal of ${original.transactionId}`),
  );
  state.transactions.set(reversal.transactionId, reversal);
  original.reversedBy = reversal.transactionId;
  original.updatedAt = state.clock.iso();
  return reversal;
}

/** The original's status becomes the sandbox's return word; its money goes back. */
function returnAsStatus(state: SandboxState, t: TransactionRecord): void {
  const word = state.reversedStatus;
  postDifference(
    state,
    t,
    { ...t, returnedAs: word },
    refOf(state, t, t.transactionId, `returned: ${t.transactionId} shows ${word}`),
  );
  t.returnedAs = word;
  t.updatedAt = state.clock.iso();
}
