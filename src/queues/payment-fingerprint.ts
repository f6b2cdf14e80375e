import { createHash } from "node:crypto";
import type { JobKind } from "./job-kinds.js";
import { decimalText } from "./job-money.js";

/**
 * A payment's fingerprint: what makes two payments the same payment whatever their keys and
 * references (kind, beneficiary, amount, currency), as a digest. Not to be confused with the
 * request fingerprint of an idempotency key (request-fingerprint.ts), which compares whole
 * requests under one key.
 */

/** How each kind that moves money names its beneficiary, from its request's body. */
const BENEFICIARY: Partial<Record<JobKind, (body: Record<string, unknown>) => string[]>> = {
  "payout.bank": (b) => [digits(b.bankCode), digits(b.accountNumber)],
  "payout.momo": (b) => [digits(b.phoneNumber), folded(b.network)],
  // An address may be case-sensitive (base58); its network is not.
  "payout.stable": (b) => [trimmed(b.toAddress), folded(b.network)],
};

/**
 * The digest of the payment a job's request makes, or undefined when it moves no money to a
 * beneficiary (funding, exchange, wallets) or lacks a part of one.
 */
export function paymentFingerprint(kind: JobKind, request: unknown): string | undefined {
  const parts = beneficiaryParts(kind, request);
  if (parts === undefined) return undefined;
  const fields = (request as { body: Record<string, unknown> }).body;
  const amount =
    typeof fields.amount === "number" || typeof fields.amount === "string"
      ? decimalText(fields.amount)
      : undefined;
  const currency = folded(fields.currency).toUpperCase();
  if (amount === undefined || currency === "") return undefined;
  return createHash("sha256")
    .update([kind, ...parts, amount, currency].join("\u0000"))
    .digest("hex")
    .slice(0, 32);
}

/**
 * Who a job pays, as the normalised parts that name its beneficiary; undefined for a kind that
 * pays none, or a request that lacks a part. Velocity limits per beneficiary read the same.
 */
export function beneficiaryParts(kind: JobKind, request: unknown): string[] | undefined {
  const beneficiary = BENEFICIARY[kind];
  const body = (request as { body?: unknown } | undefined)?.body;
  if (beneficiary === undefined || typeof body !== "object" || body === null) return undefined;
  const parts = beneficiary(body as Record<string, unknown>);
  return parts.some((p) => p === "") ? undefined : parts;
}

function trimmed(value: unknown): string {
  return typeof value === "string" ? value.trim() : "";
}

/** A case-insensitive identifier (a network, a currency): trimmed and lower-cased. */
function folded(value: unknown): string {
  return trimmed(value).toLowerCase();
}

/**
 * A number written by hand (an account number, a phone number, a bank code): spaces, dashes and
 * dots left out, and a phone's leading `+`, so "+234 801-234" is "234801234".
 */
function digits(value: unknown): string {
  return trimmed(value)
    .replace(/[\s.-]/g, "")
    .replace(/^\+/, "")
    .toLowerCase();
}
