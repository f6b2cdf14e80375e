import type { PaymentsClient } from "../client/payments-client.js";
import type { JobEnvelope } from "../queues/job-envelope.js";
import { JOB_KINDS, type LookupKind } from "../queues/job-kinds.js";
import type { Outcome } from "./classify.js";

/** What an answer's `data` says about the job: its state and the provider's id and status. */
export interface Reading {
  readonly outcome: Outcome;
  readonly upstreamId: string | undefined;
  readonly upstreamStatus: string | undefined;
}

const SUCCEEDED = new Set(["SUCCESSFUL", "COMPLETED"]);
const PENDING = new Set(["PENDING"]);

/** Reads a submission's or a lookup's `data`. */
export function readAnswer(lookup: LookupKind, data: Record<string, unknown>): Reading {
  const upstreamId =
    String(data.transactionId ?? data.orderId ?? data.walletId ?? data.virtualAccountId ?? "") ||
    undefined;
  if (lookup === "none") {
    return {
      outcome: { type: "answer", state: "succeeded" },
      upstreamId,
      upstreamStatus: undefined,
    };
  }
  const status = String(data.status);
  const state = SUCCEEDED.has(status) ? "succeeded" : PENDING.has(status) ? "pending" : "failed";
  const message =
    typeof data.failureReason === "string" ? data.failureReason : `the provider reported ${status}`;
  return { outcome: { type: "answer", state, message }, upstreamId, upstreamStatus: status };
}

/** Sends the job's request, with its key on idempotent operations. */
export function submit(client: PaymentsClient, envelope: JobEnvelope): Promise<unknown> {
  const spec = JOB_KINDS[envelope.kind];
  const input = spec.idempotent
    ? { ...envelope.request, idempotencyKey: envelope.idempotencyKey }
    : envelope.request;
  return client.call(spec.operation, input as never);
}

/** Looks up the outcome of a submission that answered PENDING. */
export function lookUp(
  client: PaymentsClient,
  envelope: JobEnvelope,
  upstreamId: string,
): Promise<unknown> {
  switch (JOB_KINDS[envelope.kind].lookup) {
    case "transaction":
      return client.getTransaction({ params: { transactionId: upstreamId } });
    case "stable-transaction": {
      const { subAccountId } = (envelope.request as { params: { subAccountId: string } }).params;
      return client.getStableTransaction({ params: { subAccountId, transactionId: upstreamId } });
    }
    case "order":
      return client.getOrder({ params: { orderId: upstreamId } });
    default:
      throw new Error(`${envelope.kind} has nothing to look up`);
  }
}
