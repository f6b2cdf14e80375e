import type { PostingRef } from "./ledger.js";
import type { TransactionRecord } from "./records.js";
import type { RequestContext } from "./request-context.js";
import type { SandboxState } from "./sandbox-state.js";

/** The fields a new fiat transaction is given; the rest start as a fresh PENDING record's. */
export type NewTransactionFields = Pick<
  TransactionRecord,
  "walletId" | "type" | "channel" | "amountMinor" | "currency" | "narration"
> &
  Partial<Pick<TransactionRecord, "reversalOf" | "status" | "createdAt">>;

/** A fiat transaction of the request's account under the request's key (not yet stored). */
export function newTransaction(
  state: SandboxState,
  ctx: RequestContext,
  fields: NewTransactionFields,
): TransactionRecord {
  const at = state.clock.iso();
  return {
    transactionId: state.nextId("txn"),
    accountId: ctx.account.accountId,
    feeMinor: 0,
    status: "PENDING",
    idempotencyKey: ctx.idempotencyKey,
    failureReason: undefined,
    reversalOf: undefined,
    reversedBy: undefined,
    returnedAs: undefined,
    reversalDueAt: undefined,
    hidden: false,
    createdAt: at,
    updatedAt: at,
    ...fields,
  };
}

/** A ledger reference for a movement of transaction `t`, as effect `effectId` of its key. */
export function refOf(
  state: SandboxState,
  t: TransactionRecord,
  effectId: string,
  memo: string,
): PostingRef {
  return {
    accountId: t.accountId,
    transactionId: t.transactionId,
    effectId,
    idempotencyKey: t.idempotencyKey,
    memo,
    at: state.clock.iso(),
  };
}

/** The request context of a movement no request made (a schedule, the control API). */
export function contextOf(
  state: SandboxState,
  accountId: string,
  idempotencyKey: string | null,
): RequestContext {
  return {
    account: state.accounts.get(accountId) as RequestContext["account"],
    idempotencyKey,
  };
}
