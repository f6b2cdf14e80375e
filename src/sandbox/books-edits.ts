import type { Transaction } from "../contract/transactions.js";
import type { BooksEdit } from "./edit-log.js";
import type { ReversalStyle } from "./options.js";
import { presentTransaction } from "./present.js";
import type { TransactionRecord } from "./records.js";
import {
  type ReversalOutcome,
  reversalRefusal,
  reverseNow,
  scheduleReversal,
} from "./reversals.js";
import { fieldError, SandboxError } from "./sandbox-error.js";
import type { SandboxState } from "./sandbox-state.js";

/** A reversal asked for through the control API. */
export interface ReverseRequest {
  /** 0 (default): at once. */
  readonly afterMs?: number | undefined;
  readonly as?: ReversalStyle | undefined;
}

/** What a control change answers: its entry in the edit log and the transactions it touched. */
export interface BooksChange {
  readonly edit: BooksEdit;
  /** The transaction as it now is (shown even when hidden). */
  readonly transaction: Transaction & { readonly hidden: boolean };
  /** The reversing transaction, when one was made at once. */
  readonly reversal?: Transaction;
}

/**
 * A fiat transaction by id, hidden or not. Stable-currency transactions and orders are not
 * changed by hand: their money is kept in other shapes (fees, conversions).
 */
function controlled(state: SandboxState, transactionId: string): TransactionRecord {
  const t = state.transactions.get(transactionId);
  if (t) return t;
  if (state.stableTransactions.has(transactionId) || state.orders.has(transactionId))
    throw fieldError(
      "transactionId",
      `${transactionId} is a stable-currency transaction or an order; only fiat transactions (spec 4.11) can be changed here`,
    );
  throw new SandboxError(404, "not_found", `transaction ${transactionId} not found`);
}

function changeOf(
  edit: BooksEdit,
  t: TransactionRecord,
  reversal?: TransactionRecord,
): BooksChange {
  return {
    edit,
    transaction: { ...presentTransaction(t), hidden: t.hidden },
    ...(reversal && { reversal: presentTransaction(reversal) }),
  };
}

/**
 * Reverses a SUCCESSFUL DEBIT at once or after `afterMs` on the sandbox's clock, as a reversing
 * transaction (default) or as a status change; refused (400, naming why) when it cannot be.
 */
export function reverseTransaction(
  state: SandboxState,
  transactionId: string,
  request: ReverseRequest,
): BooksChange {
  const t = controlled(state, transactionId);
  const as = request.as ?? "transaction";
  const afterMs = request.afterMs ?? 0;
  if (t.type !== "DEBIT")
    throw fieldError("transactionId", `${transactionId} is a CREDIT; only a DEBIT can be reversed`);
  const refusal = reversalRefusal(state, t);
  if (refusal !== undefined) throw fieldError("transactionId", `${transactionId} ${refusal}`);
  const base = { accountId: t.accountId, transactionId, as };
  if (afterMs === 0) {
    const reversal = reverseNow(state, t, as);
    const edit = state.edits.record({
      at: state.clock.iso(),
      ...base,
      action: "reversed",
      ...(reversal && { reversalId: reversal.transactionId }),
    });
    return changeOf(edit, t, reversal);
  }
  scheduleReversal(state, t, state.clock.now() + afterMs, as, (outcome) =>
    logOutcome(state, base, outcome),
  );
  const edit = state.edits.record({
    at: state.clock.iso(),
    ...base,
    action: "reversal_scheduled",
    dueAt: state.clock.iso(t.reversalDueAt),
  });
  return changeOf(edit, t);
}

function logOutcome(
  state: SandboxState,
  base: { accountId: string; transactionId: string; as: ReversalStyle },
  outcome: ReversalOutcome,
): void {
  const at = state.clock.iso();
  if (!outcome.reversed) {
    state.edits.record({ at, ...base, action: "reversal_skipped", reason: outcome.reason });
    return;
  }
  const reversalId = outcome.reversal?.transactionId;
  state.edits.record({ at, ...base, action: "reversed", ...(reversalId && { reversalId }) });
}
