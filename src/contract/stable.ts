import { z } from "zod";
import {
  StableCurrency,
  StableNetwork,
  StableTransactionType,
  TransactionStatus,
} from "./enums.js";
import {
  createdWindow,
  pathId,
  queryPage,
  queryPageSize,
  stableAmount,
  timestamps,
  toAddress,
  WINDOW_ORDER,
} from "./primitives.js";

/** 4.4 path */
export const SubAccountParams = z.strictObject({ subAccountId: pathId });

/** 4.4 body; the names `currency` and `network` and all fields required are decisions. */
export const WithdrawStableBody = z.strictObject({
  amount: stableAmount,
  toAddress,
  currency: StableCurrency,
  network: StableNetwork,
});

/** 4.13; parameter names, and the `since`/`until` window, are decisions. */
export const ListStableTransactionsQuery = z
  .strictObject({
    page: queryPage.optional(),
    pageSize: queryPageSize.optional(),
    currency: StableCurrency.optional(),
    network: StableNetwork.optional(),
    type: StableTransactionType.optional(),
    ...createdWindow,
  })
  .refine(...WINDOW_ORDER);

/** 4.14 */
export const StableTransactionParams = z.strictObject({
  subAccountId: pathId,
  transactionId: pathId,
});

export const StableTransaction = z.looseObject({
  transactionId: z.string(),
  subAccountId: z.string(),
  type: StableTransactionType,
  status: TransactionStatus,
  currency: StableCurrency,
  network: StableNetwork,
  amount: z.string(),
  toAddress: z.string().optional(),
  relatedTransactionId: z.string().optional(),
  failureReason: z.string().optional(),
  ...timestamps,
});
export type StableTransaction = z.infer<typeof StableTransaction>;

export const StableTransactionPage = z.looseObject({
  transactions: z.array(StableTransaction),
  page: z.int(),
  pageSize: z.int(),
  total: z.int(),
});

export const StableBalance = z.looseObject({
  subAccountId: z.string(),
  balances: z.array(
    z.looseObject({ currency: StableCurrency, network: StableNetwork, balance: z.string() }),
  ),
});
