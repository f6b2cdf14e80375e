import { deriveIdempotencyKey, jobIdFor } from "../queues/idempotency-key.js";
import type { JobEnvelope } from "../queues/job-envelope.js";
import type { Producer } from "../queues/producer.js";
import type { RowIssue } from "./batch-errors.js";
import { BATCH_KINDS, type BatchKind } from "./batch-kinds.js";
import type { HeldRows } from "./held-rows.js";

/** The rule of a row whose key already holds a different request; also the API's error code. */
export const KEY_REUSED = "idempotency_key_reused";

const CHUNK = 1_000;

/**
 * The held rows among `indices` whose derived key (account, batch id, reference) already holds
 * a different request: the same batch id sent again with a changed row, or a job enqueued alone
 * under a row's key. Read before anything is written, so a refused batch leaves nothing behind
 * (one MGET per 1,000 rows; only rows whose key has a fingerprint are compared). Keyed by the
 * held row's index.
 */
export async function keyReuseIssues(
  producer: Producer,
  batch: { readonly account: string; readonly batchId: string; readonly kind: BatchKind },
  held: HeldRows<JobEnvelope["request"]>,
  indices: readonly number[],
): Promise<Map<number, RowIssue>> {
  const { account, batchId } = batch;
  const kind = BATCH_KINDS[batch.kind].jobKind;
  const issues = new Map<number, RowIssue>();
  for (let start = 0; start < indices.length; start += CHUNK) {
    const chunk = indices.slice(start, start + CHUNK);
    const keys = chunk.map((i) => deriveIdempotencyKey(account, batchId, held.reference(i)));
    // Only a key with a fingerprint can hold another request: the others cost no parse or hash.
    const taken = await producer.fingerprinted(
      account,
      keys.map((key) => jobIdFor(account, key)),
    );
    const compared: number[] = [];
    const envelopes: JobEnvelope[] = [];
    taken.forEach((isTaken, j) => {
      if (!isTaken) return;
      const i = chunk[j] as number;
      compared.push(i);
      envelopes.push({
        kind,
        account,
        idempotencyKey: keys[j] as string,
        batchId,
        row: held.row(i),
        reference: held.reference(i),
        request: held.value(i),
      } as JobEnvelope);
    });
    const uses = await producer.keyUses(envelopes);
    uses.forEach((use, j) => {
      if (use === "different")
        issues.set(compared[j] as number, keyReuseIssue(envelopes[j] as JobEnvelope));
    });
  }
  return issues;
}

/** The issue of a row whose key holds a different request. */
export function keyReuseIssue(envelope: JobEnvelope): RowIssue {
  const jobId = jobIdFor(envelope.account, envelope.idempotencyKey);
  return {
    type: "invalid",
    row: envelope.row as number,
    reference: envelope.reference,
    column: "reference",
    rule: `${KEY_REUSED}: job ${jobId} holds a different request under this row's key`,
  };
}
