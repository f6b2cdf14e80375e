import { z } from "zod";
import { Currency } from "./enums.js";
import { isoDateTime, nonEmpty, positiveAmount } from "./primitives.js";

/** 4.5; only currency is required (decision). */
export const CreateWalletBody = z.strictObject({
  currency: Currency,
  bvn: nonEmpty.optional(),
  companyRegistrationNumber: nonEmpty.optional(),
});

export const Wallet = z.looseObject({
  walletId: z.string(),
  currency: Currency,
  availableBalance: z.number(),
  heldBalance: z.number(),
  createdAt: isoDateTime,
});
export type Wallet = z.infer<typeof Wallet>;

/** 4.6: validFor is in minutes, 1 to 1440 (decision). */
export const VIRTUAL_ACCOUNT_VALID_FOR_MAX = 1440;
export const CreateVirtualAccountBody = z.strictObject({
  amount: positiveAmount,
  validFor: z.int().min(1).max(VIRTUAL_ACCOUNT_VALID_FOR_MAX),
});

export const VirtualAccountStatus = z.enum(["ACTIVE", "USED", "EXPIRED"]);
export const VirtualAccount = z.looseObject({
  virtualAccountId: z.string(),
  accountNumber: z.string(),
  accountName: z.string(),
  bankName: z.string(),
  amount: z.number(),
  currency: Currency,
  status: VirtualAccountStatus,
  expiresAt: isoDateTime,
  createdAt: isoDateTime,
});
export type VirtualAccount = z.infer<typeof VirtualAccount>;
