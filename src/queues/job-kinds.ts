import { z } from "zod";
import {
  CreateOrderBody,
  CreateVirtualAccountBody,
  CreateWalletBody,
  FundWalletBody,
  OfferParams,
  PaymentLinkTokenQuery,
  SubAccountParams,
  WithdrawStableBody,
  WithdrawToBankBody,
  WithdrawToMobileMoneyBody,
} from "../contract/index.js";
import type { OperationId } from "../contract/operations.js";

/** How the outcome of a PENDING answer is looked up. */
export type LookupKind = "transaction" | "stable-transaction" | "order" | "none";

export interface JobKindSpec {
  /** The contract operation a job of this kind submits. */
  readonly operation: OperationId;
  /** Whether the operation takes an idempotency key, so that retrying it is safe. */
  readonly idempotent: boolean;
  readonly lookup: LookupKind;
  /** The operation's request, exactly as the contract types it. */
  readonly request: z.ZodType;
  /** A payout whose success is looked up again later, for a reversal or return. */
  readonly rechecked?: boolean;
  /**
   * Money leaves the account to a beneficiary: velocity limits count it, and a refusal for
   * insufficient funds holds it with its currency's lane (docs/safety.md).
   */
  readonly outflow?: boolean;
}

/** Every job kind moneyq processes: the one table producers and processors read. */
export const JOB_KINDS = {
  "payout.bank": {
    operation: "withdrawToBank",
    idempotent: true,
    lookup: "transaction",
    rechecked: true,
    outflow: true,
    request: z.strictObject({ body: WithdrawToBankBody }),
  },
  "payout.momo": {
    operation: "withdrawToMobileMoney",
    idempotent: true,
    lookup: "transaction",
    rechecked: true,
    outflow: true,
    // 4.2, 4.4, 4.5, 4.6: which fields are required is the provider profile's to say.
    request: z.strictObject({ body: WithdrawToMobileMoneyBody.partial() }),
  },
  "payout.stable": {
    operation: "withdrawStable",
    idempotent: true,
    lookup: "stable-transaction",
    rechecked: true,
    outflow: true,
    request: z.strictObject({ params: SubAccountParams, body: WithdrawStableBody.partial() }),
  },
  "funding.wallet": {
    operation: "fundWallet",
    idempotent: true,
    lookup: "transaction",
    request: z.strictObject({ body: FundWalletBody }),
  },
  "exchange.order": {
    operation: "createOrder",
    idempotent: true,
    lookup: "order",
    request: z.strictObject({ params: OfferParams, body: CreateOrderBody }),
  },
  "exchange.payment-link-order": {
    operation: "createPaymentLinkOrder",
    idempotent: true,
    lookup: "order",
    request: z.strictObject({
      params: OfferParams,
      query: PaymentLinkTokenQuery,
      body: CreateOrderBody,
    }),
  },
  "wallet.create": {
    operation: "createWallet",
    idempotent: false,
    lookup: "none",
    request: z.strictObject({ body: CreateWalletBody.partial() }),
  },
  "collection.virtual-account": {
    operation: "createVirtualAccount",
    idempotent: false,
    lookup: "none",
    request: z.strictObject({ body: CreateVirtualAccountBody.partial() }),
  },
} as const satisfies Record<string, JobKindSpec>;

export type JobKind = keyof typeof JOB_KINDS;
export const JOB_KIND_NAMES = Object.keys(JOB_KINDS) as JobKind[];
