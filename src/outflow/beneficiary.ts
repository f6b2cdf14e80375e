import { createHash } from "node:crypto";
import type { JobKind } from "../queues/job-kinds.js";

/** The fields that name who a payout pays, by kind. */
const BENEFICIARY_FIELDS: Partial<Record<JobKind, readonly string[]>> = {
  "payout.bank": ["bankCode", "accountNumber"],
  "payout.momo": ["phoneNumber"],
  "payout.stable": ["network", "toAddress"],
};

/**
 * Who a payout pays, as a short hash of its identifying fields (bank code and account number,
 * phone number, or network and address; trimmed, case folded), so that Redis keys never hold
 * the data itself. Undefined for a kind without a beneficiary or a body without the fields.
 */
export function beneficiaryOf(kind: JobKind, request: unknown): string | undefined {
  const fields = BENEFICIARY_FIELDS[kind];
  const body = (request as { body?: Record<string, unknown> } | undefined)?.body;
  if (fields === undefined || body === undefined) return undefined;
  const parts: string[] = [];
  for (const field of fields) {
    const value = body[field];
    if (typeof value !== "string" && typeof value !== "number") return undefined;
    parts.push(String(value).trim().toLowerCase());
  }
  return createHash("sha256")
    .update(`${kind}\n${parts.join("\n")}`)
    .digest("hex")
    .slice(0, 24);
}
