/**
 * The names of the spans moneyq makes of a job, and what they say of it. Only these facts,
 * never the job's idempotency key, request or money: a trace leaves for a tracing backend.
 */
export const SPAN = Object.freeze({
  /** The job is added to its queue (by `Producer.enqueue`, `POST /v1/jobs` or a batch row). */
  enqueue: "moneyq.enqueue",
  /** From enqueue to the first attempt's start, recorded when that attempt starts. */
  queueWait: "moneyq.queue_wait",
  /** An attempt waits for its slot of the account's rate (and checks its lock and holds). */
  rateGate: "moneyq.rate_gate",
  /** A lookup confirming a PENDING answer; the HTTP call is its child. */
  lookup: "moneyq.lookup",
  /** The job's terminal result is recorded (marker, results stream, batch row). */
  result: "moneyq.result",
});

export const ATTR = Object.freeze({
  jobId: "moneyq.job.id",
  kind: "moneyq.job.kind",
  account: "moneyq.account",
  /** Which submission attempt (1 for the first); 0 on the enqueue span, before any. */
  attempt: "moneyq.job.attempt",
  /** Where the job stands: submit, confirm or reconcile. */
  phase: "moneyq.job.phase",
  /** What the attempt decided after the answer (succeed, confirm, retry...). */
  action: "moneyq.job.action",
  /** What the rate gate answered: send, held, cancelled, already_sent. */
  gateAnswer: "moneyq.rate_gate.answer",
  /** A lookup's count since the first PENDING answer (0 for the first). */
  lookups: "moneyq.job.lookups",
  /** What a lookup found: pending, succeeded, failed, or error. */
  lookupOutcome: "moneyq.lookup.outcome",
  result: "moneyq.job.result",
  /** The result's code (validation_error, confirm_deadline...), when it has one. */
  resultCode: "moneyq.job.result_code",
});

export type SpanValue = string | number | boolean;
export type SpanAttributes = Readonly<Record<string, SpanValue>>;

/** What every span of a job says of it. A run's log line has more (its key), which is left out. */
export interface JobFacts {
  readonly jobId: string | undefined;
  readonly kind: string;
  readonly account: string;
  readonly attempt: number;
}

/** The span attributes of `facts`, picked field by field so nothing else can slip in. */
export function jobAttributes(facts: JobFacts): Record<string, SpanValue> {
  return {
    [ATTR.jobId]: facts.jobId ?? "",
    [ATTR.kind]: facts.kind,
    [ATTR.account]: facts.account,
    [ATTR.attempt]: facts.attempt,
  };
}
