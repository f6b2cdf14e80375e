import { createHash } from "node:crypto";
import type { JobKind } from "../queues/job-kinds.js";
import { beneficiaryParts } from "../queues/payment-fingerprint.js";

/**
 * Who a payout pays, as a short hash of the parts that name its beneficiary (bank code and
 * account number, phone number and network, or address and network, normalised as a payment's
 * fingerprint reads them), so that Redis keys never hold the data itself. Undefined for a kind
 * without a beneficiary or a body without the parts.
 */
export function beneficiaryOf(kind: JobKind, request: unknown): string | undefined {
  const parts = beneficiaryParts(kind, request);
  if (parts === undefined) return undefined;
  return createHash("sha256")
    .update(`${kind}\n${parts.join("\n")}`)
    .digest("hex")
    .slice(0, 24);
}
