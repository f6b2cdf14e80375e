import type { OperationId } from "../../src/contract/index.js";
import { TRON_ADDRESS } from "../fixtures/operation-examples.js";

export const MISSING = Symbol("missing");
type Part = "body" | "query" | "params";

/** `rule: null` means the value is valid (the boundary itself); otherwise the rule reported. */
export interface LimitCase {
  readonly op: OperationId;
  readonly part: Part;
  readonly field: string;
  readonly value: unknown;
  readonly rule: string | null;
}

const c = (
  op: OperationId,
  part: Part,
  field: string,
  value: unknown,
  rule: string | null,
): LimitCase => ({
  op,
  part,
  field,
  value,
  rule,
});

const s = (n: number) => "x".repeat(n);
/** Enum rules start with this text and go on to list the allowed values. */
const expect_enum = "must be one of";
const amountCases = (op: OperationId): LimitCase[] => [
  c(op, "body", "amount", 1_000_000_000, null),
  c(op, "body", "amount", 1_000_000_001, "at most 1000000000"),
  c(op, "body", "amount", 0.01, null),
  c(op, "body", "amount", 0, "greater than 0"),
  c(op, "body", "amount", -5, "greater than 0"),
  c(op, "body", "amount", 1.005, "at most 2 decimal places"),
  c(op, "body", "amount", "100", "must be a number"),
  c(op, "body", "amount", MISSING, "required"),
  c(op, "body", "currency", "ABC", expect_enum),
  c(op, "body", "currency", MISSING, "required"),
];

export const limitCases: readonly LimitCase[] = [
  // 4.1 withdraw to bank
  ...amountCases("withdrawToBank"),
  c("withdrawToBank", "body", "accountNumber", s(10), null),
  c("withdrawToBank", "body", "accountNumber", s(11), "at most 10 characters"),
  c("withdrawToBank", "body", "accountNumber", "", "at least 1 character"),
  c("withdrawToBank", "body", "accountNumber", 123, "must be a string, got number"),
  c("withdrawToBank", "body", "accountName", s(100), null),
  c("withdrawToBank", "body", "accountName", s(101), "at most 100 characters"),
  c("withdrawToBank", "body", "bankName", s(200), null),
  c("withdrawToBank", "body", "bankName", s(201), "at most 200 characters"),
  c("withdrawToBank", "body", "bankCode", MISSING, "required"),
  c("withdrawToBank", "body", "narration", s(100), null),
  c("withdrawToBank", "body", "narration", s(101), "at most 100 characters"),
  c("withdrawToBank", "body", "narration", MISSING, null),
  c("withdrawToBank", "body", "iso2", "NG", null),
  c("withdrawToBank", "body", "iso2", "N", "exactly 2 characters"),
  c("withdrawToBank", "body", "iso2", "NGA", "exactly 2 characters"),
  c("withdrawToBank", "body", "iso2", MISSING, null),
  c("withdrawToBank", "body", "accountNumbr", "1", "unknown field"),
  // 4.2 withdraw to mobile money
  ...amountCases("withdrawToMobileMoney"),
  c("withdrawToMobileMoney", "body", "phoneNumber", s(10), null),
  c("withdrawToMobileMoney", "body", "phoneNumber", s(14), null),
  c("withdrawToMobileMoney", "body", "phoneNumber", s(9), "at least 10 characters"),
  c("withdrawToMobileMoney", "body", "phoneNumber", s(15), "at most 14 characters"),
  c("withdrawToMobileMoney", "body", "network", MISSING, "required"),
  c("withdrawToMobileMoney", "body", "iso2", MISSING, "required"),
  c("withdrawToMobileMoney", "body", "iso2", "KEN", "exactly 2 characters"),
  c("withdrawToMobileMoney", "body", "narration", s(101), "at most 100 characters"),
  // 4.3 fund wallet
  ...amountCases("fundWallet"),
  c("fundWallet", "body", "paymentMethod", "CHEQUE", expect_enum),
  c("fundWallet", "body", "paymentMethod", MISSING, "required"),
  c("fundWallet", "body", "phoneNumber", s(8), null),
  c("fundWallet", "body", "phoneNumber", s(14), null),
  c("fundWallet", "body", "phoneNumber", s(7), "at least 8 characters"),
  c("fundWallet", "body", "phoneNumber", s(15), "at most 14 characters"),
  c("fundWallet", "body", "iso2", "NGN", "exactly 2 characters"),
  // 4.4 stable withdrawal
  c("withdrawStable", "params", "subAccountId", "", "at least 1 character"),
  c("withdrawStable", "body", "amount", "10", null),
  c("withdrawStable", "body", "amount", "0.000001", null),
  c("withdrawStable", "body", "amount", "0.0000001", "at most 6 decimal places"),
  c("withdrawStable", "body", "amount", "1.", "must match pattern /^\\d+(\\.\\d+)?$/"),
  c("withdrawStable", "body", "amount", "-1", "must match pattern /^\\d+(\\.\\d+)?$/"),
  c("withdrawStable", "body", "amount", "0", "greater than 0"),
  c("withdrawStable", "body", "amount", 10, "must be a string, got number"),
  c("withdrawStable", "body", "toAddress", `X${TRON_ADDRESS.slice(1)}`, "must match pattern"),
  c("withdrawStable", "body", "toAddress", TRON_ADDRESS.slice(0, 33), "must match pattern"),
  c("withdrawStable", "body", "toAddress", `${TRON_ADDRESS.slice(0, 33)}0`, "must match pattern"),
  c("withdrawStable", "body", "currency", "BUSD", 'must be one of "USDT", "USDC"'),
  c(
    "withdrawStable",
    "body",
    "network",
    "ethereum",
    'must be one of "polygon", "arbitrum", "base", "solana"',
  ),
  c("withdrawStable", "body", "network", MISSING, "required"),
  // 4.5 create wallet
  c("createWallet", "body", "currency", MISSING, "required"),
  c("createWallet", "body", "currency", "ABC", expect_enum),
  c("createWallet", "body", "bvn", MISSING, null),
  // 4.6 virtual account
  c("createVirtualAccount", "body", "validFor", 1, null),
  c("createVirtualAccount", "body", "validFor", 1440, null),
  c("createVirtualAccount", "body", "validFor", 0, "at least 1"),
  c("createVirtualAccount", "body", "validFor", 1441, "at most 1440"),
  c("createVirtualAccount", "body", "validFor", 1.5, "must be a whole number"),
  c("createVirtualAccount", "body", "amount", MISSING, "required"),
  // 4.7 identity verification
  c("initiateIdentityVerification", "body", "value", MISSING, "required"),
  c("initiateIdentityVerification", "body", "value", "", "at least 1 character"),
  // 4.8 decline payment link
  c("declinePaymentLink", "query", "token", MISSING, "required"),
  c("declinePaymentLink", "body", "reason", MISSING, null),
  c("declinePaymentLink", "body", "reason", s(501), "at most 500 characters"),
  // 4.9 payment link rate: the full set, SLE included
  c("getPaymentLinkRate", "query", "fromCurrency", "SLE", null),
  c("getPaymentLinkRate", "query", "toCurrency", "XYZ", expect_enum),
  c("getPaymentLinkRate", "query", "fromCurrencyIso2", "NGAA", null),
  c("getPaymentLinkRate", "query", "fromCurrencyIso2", "NGA", "exactly 4 characters"),
  c("getPaymentLinkRate", "query", "toCurrencyIso2", "NGAAA", "exactly 4 characters"),
  c("getPaymentLinkRate", "query", "toCurrencyIso2", MISSING, "required"),
  // 4.10 exchange rate: the set without SLE
  c("getExchangeRate", "query", "fromCurrency", "SLE", expect_enum),
  c("getExchangeRate", "query", "toCurrency", "SLE", expect_enum),
  c("getExchangeRate", "query", "toCurrency", "ZAR", null),
  c("getExchangeRate", "query", "fromCurrencyIso2", "USA", "exactly 4 characters"),
  c("getExchangeRate", "query", "amount", "abc", "must be a number"),
  c("getExchangeRate", "query", "amount", "0", "greater than 0"),
  c("getExchangeRate", "query", "amount", MISSING, "required"),
  // 4.11 list transactions
  c("listTransactions", "query", "sortDirection", "up", 'must be one of "asc", "desc"'),
  c(
    "listTransactions",
    "query",
    "sortBy",
    "name",
    'must be one of "date", "amount", "type", "status"',
  ),
  c("listTransactions", "query", "type", "REFUND", 'must be one of "CREDIT", "DEBIT"'),
  c("listTransactions", "query", "status", "DONE", expect_enum),
  c("listTransactions", "query", "currency", "ABC", expect_enum),
  c("listTransactions", "query", "page", "1", "unknown field"),
  // 4.12 lookup
  c("getTransaction", "params", "transactionId", "", "at least 1 character"),
  // 4.13 stable history
  c("listStableTransactions", "query", "page", "1", null),
  c("listStableTransactions", "query", "page", "0", "at least 1"),
  c("listStableTransactions", "query", "page", "1.5", "must be a whole number"),
  c("listStableTransactions", "query", "pageSize", "1", null),
  c("listStableTransactions", "query", "pageSize", "100", null),
  c("listStableTransactions", "query", "pageSize", "0", "at least 1"),
  c("listStableTransactions", "query", "pageSize", "101", "at most 100"),
  c("listStableTransactions", "query", "type", "REFUND", expect_enum),
  c("listStableTransactions", "query", "network", "tron", expect_enum),
  // 4.14, 4.15, 4.17 lookups
  c("getStableTransaction", "params", "transactionId", "", "at least 1 character"),
  c("getStableBalance", "params", "subAccountId", s(129), "at most 128 characters"),
  c("getOrder", "params", "orderId", "", "at least 1 character"),
  // 4.18, 4.19 exchanges
  c("createOrder", "body", "amount", MISSING, "required"),
  c("createOrder", "body", "buyerDebitPaymentMethod", "PAYPAL", expect_enum),
  c("createOrder", "body", "buyerCreditPaymentMethod", MISSING, "required"),
  c("createOrder", "body", "buyerDebitPaymentDetails", "card", "must be an object, got string"),
  c("createOrder", "body", "buyerDebitPaymentDetails", { pan: "4111" }, null),
  c("createPaymentLinkOrder", "query", "token", MISSING, "required"),
  c("createPaymentLinkOrder", "body", "buyerCreditPaymentMethod", "INTERAC", null),
];

export const coveredOperations = new Set(limitCases.map((x) => x.op));
