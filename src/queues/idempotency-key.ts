import { createHash } from "node:crypto";

/**
 * The key of a unit of work that the caller did not key itself: a hash of account, batch id
 * and row reference, so the same work always gets the same key, in any process, at any time.
 */
export function deriveIdempotencyKey(account: string, batchId: string, reference: string): string {
  const digest = createHash("sha256")
    .update(`${account}\u0000${batchId}\u0000${reference}`)
    .digest("base64url");
  return `mq_${digest.slice(0, 40)}`;
}

/**
 * The BullMQ job id of a unit of work. It derives from account and key only, so enqueueing
 * the same work again finds the same job, and re-enqueueing removed work reaches the same key.
 */
export function jobIdFor(account: string, idempotencyKey: string): string {
  return `j_${createHash("sha256").update(`${account}\u0000${idempotencyKey}`).digest("hex").slice(0, 40)}`;
}
