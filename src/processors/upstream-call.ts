import { type DefiniteAnswer, PaymentsResponseError } from "../client/errors.js";
import type { EnvelopeAnswer, PaymentsClient } from "../client/payments-client.js";
import type { ProviderAdapter } from "../provider/adapter.js";
import { boundedData, cutText } from "../provider/bounds.js";
import { LOOKUP_OPERATIONS, type ProviderProfile } from "../provider/profile.js";
import { readJobAnswer } from "../provider/read-answer.js";
import type { Phase } from "../queues/job-data.js";
import type { JobEnvelope } from "../queues/job-envelope.js";
import { JOB_KINDS, type JobKind } from "../queues/job-kinds.js";
import type { Outcome } from "./classify.js";

/** What an answer's `data` says about the job: its state and the provider's id and status. */
export interface Reading {
  readonly outcome: Outcome;
  readonly upstreamId: string | undefined;
  readonly upstreamStatus: string | undefined;
  /** The answer's `data` as received, kept when the profile could not read it. */
  readonly upstreamData?: unknown;
  /**
   * Set when the answer says the payout succeeded and was then reversed or returned (a status in
   * the profile's `reversed` list, or a reversing transaction named): the job succeeded, and its
   * reversal is recorded as a later event (processors/rechecks.ts).
   */
  readonly reversed?: boolean;
}

/**
 * Reads a submission's or a lookup's answer through the provider profile. A status in none of
 * the profile's lists is pending (looked up again, never failed); an answer without the id or
 * status the job needs is unrecognised, and ends the job for an operator to settle.
 */
export function readAnswer(
  profile: ProviderProfile,
  kind: JobKind,
  phase: Phase,
  answer: EnvelopeAnswer | DefiniteAnswer,
  adapter?: ProviderAdapter,
): Reading {
  const spec = JOB_KINDS[kind];
  const creation = spec.lookup === "none";
  const confirming = phase === "confirm" && !creation;
  const operation = confirming
    ? LOOKUP_OPERATIONS[spec.lookup as keyof typeof LOOKUP_OPERATIONS]
    : spec.operation;
  const needs = { id: !creation && !confirming, status: !creation };
  const reading = readJobAnswer(profile, operation, answer.data, needs, adapter);
  const { id, status, failureReason } = reading.fields;
  const unreadable = "unreadable" in answer ? answer.unreadable : undefined;
  if (unreadable !== undefined || !reading.understood) {
    const unread = reading.understood ? [] : reading.unread;
    const why = unreadable ?? `its data has no readable ${unread.join(" or ")}`;
    return {
      outcome: {
        type: "unrecognised",
        message: `the provider answered "${cutText(answer.message)}" but ${why} (see docs/provider-profile.md)`,
      },
      upstreamId: id,
      upstreamStatus: status,
      upstreamData: boundedData(answer.data),
    };
  }
  const reversed = reading.meaning === "reversed" || reading.fields.reversedBy !== undefined;
  const state =
    reading.meaning === "unknown" ? "pending" : reversed ? "succeeded" : reading.meaning;
  const message = failureReason ?? `the provider reported ${status}`;
  return {
    outcome: { type: "answer", state, message },
    upstreamId: id,
    upstreamStatus: status,
    ...(reversed && { reversed }),
  };
}

/**
 * A 2xx saying `success: true` in a body that is otherwise not the spec's envelope (no
 * message, `data` not an object, too large) is still a definite answer: the request had its
 * effect and must not be sent again. The client reads it; the reader keeps its data.
 */
async function definite(call: Promise<EnvelopeAnswer>): Promise<EnvelopeAnswer | DefiniteAnswer> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof PaymentsResponseError && error.definiteAnswer) return error.definiteAnswer;
    throw error;
  }
}

/**
 * What a run's request is abandoned on: the job's abort signal, which fires when this worker
 * lost the job's lock (the job's new owner decides what to do with it); and `sendBy`, when the
 * lock may lapse: a request not yet written to its connection then is never written.
 */
export interface CallOptions {
  readonly signal?: AbortSignal | undefined;
  readonly sendBy?: number | undefined;
}

/** Sends the job's request, with its key on idempotent operations. */
export function submit(
  client: PaymentsClient,
  envelope: JobEnvelope,
  options: CallOptions = {},
): Promise<EnvelopeAnswer | DefiniteAnswer> {
  const spec = JOB_KINDS[envelope.kind];
  const input = spec.idempotent
    ? { ...envelope.request, idempotencyKey: envelope.idempotencyKey }
    : envelope.request;
  return definite(client.send(spec.operation, input as never, options));
}

/** Looks up the outcome of a submission that answered PENDING. */
export function lookUp(
  client: PaymentsClient,
  envelope: JobEnvelope,
  upstreamId: string,
  options: CallOptions = {},
): Promise<EnvelopeAnswer | DefiniteAnswer> {
  switch (JOB_KINDS[envelope.kind].lookup) {
    case "transaction":
      return definite(
        client.send("getTransaction", { params: { transactionId: upstreamId } }, options),
      );
    case "stable-transaction": {
      const { subAccountId } = (envelope.request as { params: { subAccountId: string } }).params;
      return definite(
        client.send(
          "getStableTransaction",
          { params: { subAccountId, transactionId: upstreamId } },
          options,
        ),
      );
    }
    case "order":
      return definite(client.send("getOrder", { params: { orderId: upstreamId } }, options));
    default:
      throw new Error(`${envelope.kind} has nothing to look up`);
  }
}
