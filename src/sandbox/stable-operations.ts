import type { z } from "zod";
import type { StableNetwork } from "../contract/enums.js";
import { StableCurrency, StableNetwork as StableNetworkEnum } from "../contract/enums.js";
import type {
  ListStableTransactionsQuery,
  StableTransaction,
  WithdrawStableBody,
} from "../contract/index.js";
import { inWindow } from "./list-window.js";
import { forcedOutcome } from "./magic-values.js";
import { microToStable, stableToMicro } from "./money.js";
import { presentStableTransaction } from "./present.js";
import type { StableTransactionRecord } from "./records.js";
import type { RequestContext } from "./request-context.js";
import { SandboxError } from "./sandbox-error.js";
import { type SandboxState, stableBalance } from "./sandbox-state.js";

/** Network fee of a stable withdrawal, charged as a CHARGES transaction. Documented in docs/sandbox.md. */
export const NETWORK_FEES: Readonly<Record<StableNetwork, string>> = Object.freeze({
  polygon: "0.1",
  arbitrum: "0.2",
  base: "0.05",
  solana: "0.01",
});

export const DEFAULT_PAGE_SIZE = 20;

function record(
  state: SandboxState,
  fields: Omit<
    StableTransactionRecord,
    "transactionId" | "createdAt" | "updatedAt" | "failureReason"
  >,
): StableTransactionRecord {
  const at = state.clock.iso();
  const rec = {
    transactionId: state.nextId("stx"),
    failureReason: undefined,
    createdAt: at,
    updatedAt: at,
    ...fields,
  };
  state.stableTransactions.set(rec.transactionId, rec);
  return rec;
}

/** 4.4: the amount is held, the network fee charged at once; PENDING resolves like a fiat withdrawal. */
export function withdrawStable(
  state: SandboxState,
  ctx: RequestContext,
  subAccountId: string,
  body: z.output<typeof WithdrawStableBody>,
): StableTransaction {
  const sub = state.owned(state.subAccounts, subAccountId, "sub-account", ctx.account.accountId);
  const amount = stableToMicro(body.amount);
  const fee = stableToMicro(NETWORK_FEES[body.network]);
  const outcome = forcedOutcome(undefined, Number(body.amount));
  const available = stableBalance(sub.subAccountId, body.currency, body.network, "available");
  const held = stableBalance(sub.subAccountId, body.currency, body.network, "held");
  const insufficient = new SandboxError(
    400,
    "insufficient_funds",
    `insufficient ${body.currency} on ${body.network} for ${body.amount} plus the ${NETWORK_FEES[body.network]} network fee`,
  );
  if (outcome === "insufficient_funds" || state.ledger.balance(available) < amount + fee)
    throw insufficient;

  const base = {
    subAccountId,
    accountId: ctx.account.accountId,
    currency: body.currency,
    network: body.network,
  };
  const withdrawal = record(state, {
    ...base,
    type: "WITHDRAWAL",
    status: "PENDING",
    amountMicro: amount,
    toAddress: body.toAddress,
    relatedTransactionId: undefined,
  });
  const charge = record(state, {
    ...base,
    type: "CHARGES",
    status: "SUCCESSFUL",
    amountMicro: fee,
    toAddress: undefined,
    relatedTransactionId: withdrawal.transactionId,
  });
  const ref = (transactionId: string, memo: string) => ({
    accountId: ctx.account.accountId,
    transactionId,
    effectId: withdrawal.transactionId,
    idempotencyKey: ctx.idempotencyKey,
    memo,
    at: state.clock.iso(),
  });
  state.ledger.post(
    [
      { balance: available, delta: -(amount + fee) },
      { balance: held, delta: amount },
    ],
    ref(
      withdrawal.transactionId,
      `hold ${microToStable(amount)} and charge fee ${charge.transactionId}`,
    ),
  );
  if (outcome === "stay_pending") return presentStableTransaction(withdrawal);

  state.schedule(state.settleDelayMs, () => {
    withdrawal.updatedAt = state.clock.iso();
    if (outcome === "fail") {
      const reversal = record(state, {
        ...base,
        type: "REVERSAL",
        status: "SUCCESSFUL",
        amountMicro: amount + fee,
        toAddress: undefined,
        relatedTransactionId: withdrawal.transactionId,
      });
      state.ledger.post(
        [
          { balance: held, delta: -amount },
          { balance: available, delta: amount + fee },
        ],
        ref(reversal.transactionId, "withdrawal failed: amount and fee returned"),
      );
      withdrawal.status = "FAILED";
      withdrawal.failureReason = "the network rejected the transfer";
      return;
    }
    state.ledger.post(
      [{ balance: held, delta: -amount }],
      ref(withdrawal.transactionId, "withdrawal sent"),
    );
    withdrawal.status = "SUCCESSFUL";
  });
  return presentStableTransaction(withdrawal);
}

/** 4.13: newest first. */
export function listStableTransactions(
  state: SandboxState,
  ctx: RequestContext,
  query: z.output<typeof ListStableTransactionsQuery>,
) {
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
  const rows = [...state.stableTransactions.values()]
    .filter(
      (t) =>
        t.accountId === ctx.account.accountId &&
        (query.currency === undefined || t.currency === query.currency) &&
        (query.network === undefined || t.network === query.network) &&
        (query.type === undefined || t.type === query.type) &&
        inWindow(t.createdAt, query),
    )
    .reverse();
  return {
    transactions: rows.slice((page - 1) * pageSize, page * pageSize).map(presentStableTransaction),
    page,
    pageSize,
    total: rows.length,
  };
}

/** 4.14 */
export function getStableTransaction(
  state: SandboxState,
  ctx: RequestContext,
  subAccountId: string,
  transactionId: string,
): StableTransaction {
  const t = state.owned(
    state.stableTransactions,
    transactionId,
    "transaction",
    ctx.account.accountId,
  );
  if (t.subAccountId !== subAccountId)
    throw new SandboxError(404, "not_found", `transaction ${transactionId} not found`);
  return presentStableTransaction(t);
}

/** 4.15 */
export function getStableBalance(state: SandboxState, ctx: RequestContext, subAccountId: string) {
  const sub = state.owned(state.subAccounts, subAccountId, "sub-account", ctx.account.accountId);
  return {
    subAccountId: sub.subAccountId,
    balances: StableCurrency.options.flatMap((currency) =>
      StableNetworkEnum.options.map((network) => ({
        currency,
        network,
        balance: microToStable(
          state.ledger.balance(stableBalance(sub.subAccountId, currency, network, "available")),
        ),
      })),
    ),
  };
}
