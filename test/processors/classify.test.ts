import { describe, expect, it } from "vitest";
import {
  PaymentsAuthenticationError,
  PaymentsConnectionError,
  PaymentsIdempotencyInFlightError,
  PaymentsIdempotencyKeyReusedError,
  PaymentsInsufficientFundsError,
  PaymentsInvalidRequestError,
  PaymentsNotFoundError,
  PaymentsRateLimitError,
  PaymentsRefusedError,
  PaymentsResponseError,
  PaymentsServerError,
  PaymentsTimeoutError,
  PaymentsValidationError,
} from "../../src/client/errors.js";
import { toTransportError } from "../../src/client/transport-error.js";
import {
  type Action,
  type ClassifyContext,
  classify,
  type Outcome,
} from "../../src/processors/classify.js";

const base = { operation: "withdrawToBank", message: "withdrawToBank: m" };
const reached = { ...base, mayHaveReachedServer: true };
const notSent = { ...base, mayHaveReachedServer: false };
const err = (error: unknown): Outcome => ({ type: "error", error });
const submit: ClassifyContext = {
  phase: "submit",
  idempotent: true,
  lastAttempt: false,
  sentBefore: false,
};
const last: ClassifyContext = { ...submit, lastAttempt: true };
const confirm: ClassifyContext = { ...submit, phase: "confirm", sentBefore: true };
const reconcile: ClassifyContext = { ...submit, phase: "reconcile", sentBefore: true };
const nonIdem: ClassifyContext = { ...submit, idempotent: false };
/** A later attempt of a job whose first one may have reached the provider. */
const again: ClassifyContext = { ...submit, sentBefore: true };

const badKey = () =>
  new PaymentsInvalidRequestError({
    operation: "withdrawToBank",
    field: "idempotencyKey",
    rule: "must be visible ASCII",
  });
const NOT_SENT_KEY = "idempotencyKey: must be visible ASCII; the request was not sent";
/** undici's refusal of a header, as thrown before the request left or after its status arrived. */
const undiciRefusal = () =>
  Object.assign(new Error("invalid idempotencykey header"), { code: "UND_ERR_INVALID_ARG" });

const table: [string, Outcome, ClassifyContext, Action][] = [
  ["200, terminal success", { type: "answer", state: "succeeded" }, submit, { type: "succeed" }],
  [
    "200, terminal failure",
    { type: "answer", state: "failed", message: "rejected" },
    submit,
    { type: "fail", code: "upstream_failed", message: "rejected" },
  ],
  ["200, PENDING", { type: "answer", state: "pending" }, submit, { type: "confirm" }],
  [
    "200, still PENDING on lookup",
    { type: "answer", state: "pending" },
    confirm,
    { type: "confirm" },
  ],
  [
    "400 validation",
    err(new PaymentsValidationError(reached)),
    submit,
    { type: "fail", code: "validation_error", message: "withdrawToBank: m" },
  ],
  [
    "200 carrying the error envelope (success: false): the provider's refusal",
    err(
      new PaymentsRefusedError({
        ...reached,
        status: 200,
        message: "withdrawToBank: Insufficient balance",
      }),
    ),
    submit,
    { type: "fail", code: "refused", message: "withdrawToBank: Insufficient balance" },
  ],
  [
    "200 carrying the error envelope, on a resend after an answer was lost",
    err(new PaymentsRefusedError({ ...reached, status: 200 })),
    { ...again, possiblySent: true },
    {
      type: "needs_reconciliation",
      code: "outcome_unknown",
      message:
        "an earlier attempt may have reached the provider, which now refuses: withdrawToBank: m",
    },
  ],
  [
    "400 insufficient funds, a kind that does not hold on funds",
    err(new PaymentsInsufficientFundsError(reached)),
    submit,
    { type: "fail", code: "insufficient_funds", message: "withdrawToBank: m" },
  ],
  [
    "400 insufficient funds, a payout: held with its currency's lane",
    err(new PaymentsInsufficientFundsError(reached)),
    { ...submit, holdsOnFunds: true },
    { type: "hold_funds", message: "withdrawToBank: m" },
  ],
  [
    "400 insufficient funds of a payout's later attempt, its first one maybe sent",
    err(new PaymentsInsufficientFundsError(reached)),
    { ...submit, holdsOnFunds: true, possiblySent: true },
    {
      type: "needs_reconciliation",
      code: "outcome_unknown",
      message:
        "an earlier attempt may have reached the provider, which now refuses: withdrawToBank: m",
    },
  ],
  [
    "404 on submit",
    err(new PaymentsNotFoundError(reached)),
    submit,
    { type: "fail", code: "not_found", message: "withdrawToBank: m" },
  ],
  [
    "401 or 403",
    err(new PaymentsAuthenticationError(reached)),
    submit,
    { type: "pause_account", message: "withdrawToBank: m" },
  ],
  [
    "401 on lookup",
    err(new PaymentsAuthenticationError(reached)),
    confirm,
    { type: "pause_account", message: "withdrawToBank: m" },
  ],
  [
    "409 same key in flight",
    err(new PaymentsIdempotencyInFlightError(reached)),
    submit,
    { type: "retry", reason: "in_flight" },
  ],
  [
    "same key, another body",
    err(new PaymentsIdempotencyKeyReusedError(reached)),
    submit,
    { type: "fail", code: "idempotency_key_reused", message: "withdrawToBank: m" },
  ],
  [
    "429 with Retry-After",
    err(new PaymentsRateLimitError({ ...reached, retryAfterMs: 2000 })),
    submit,
    { type: "rate_limit", delayMs: 2000, askedMs: 2000 },
  ],
  [
    "429 without Retry-After",
    err(new PaymentsRateLimitError({ ...reached, retryAfterMs: undefined })),
    submit,
    { type: "rate_limit", delayMs: 1000 },
  ],
  [
    "429 with Retry-After 0 (or a date passed) still pauses a moment",
    err(new PaymentsRateLimitError({ ...reached, retryAfterMs: 0 })),
    submit,
    { type: "rate_limit", delayMs: 1, askedMs: 0 },
  ],
  [
    "429 with a fractional Retry-After pauses whole milliseconds",
    err(new PaymentsRateLimitError({ ...reached, retryAfterMs: 0.4 })),
    submit,
    { type: "rate_limit", delayMs: 1, askedMs: 0.4 },
  ],
  [
    "429 asking more than five minutes pauses five minutes",
    err(new PaymentsRateLimitError({ ...reached, retryAfterMs: 60_000_000 })),
    submit,
    { type: "rate_limit", delayMs: 300_000, askedMs: 60_000_000 },
  ],
  [
    "429 asking beyond any number Redis stores pauses five minutes",
    err(new PaymentsRateLimitError({ ...reached, retryAfterMs: 1e33 })),
    submit,
    { type: "rate_limit", delayMs: 300_000, askedMs: 1e33 },
  ],
  [
    "429 on the last attempt is still a pause",
    err(new PaymentsRateLimitError({ ...reached, retryAfterMs: 500 })),
    last,
    { type: "rate_limit", delayMs: 500, askedMs: 500 },
  ],
  ["5xx", err(new PaymentsServerError(reached)), submit, { type: "retry", reason: "server_error" }],
  ["timeout", err(new PaymentsTimeoutError(reached)), submit, { type: "retry", reason: "timeout" }],
  [
    "connection reset after send",
    err(new PaymentsConnectionError(reached)),
    submit,
    { type: "retry", reason: "connection_error" },
  ],
  [
    "not an envelope",
    err(new PaymentsResponseError(reached)),
    submit,
    { type: "retry", reason: "invalid_response" },
  ],
  ["a bug", err(new TypeError("x")), submit, { type: "retry", reason: "unexpected" }],
  [
    "retries exhausted, 5xx",
    err(new PaymentsServerError(reached)),
    last,
    { type: "reconcile", reason: "server_error" },
  ],
  [
    "retries exhausted, timeout",
    err(new PaymentsTimeoutError(reached)),
    last,
    { type: "reconcile", reason: "timeout" },
  ],
  [
    "retries exhausted, in flight",
    err(new PaymentsIdempotencyInFlightError(reached)),
    last,
    { type: "reconcile", reason: "in_flight" },
  ],
  [
    "lookup still unknown after a timeout, lookups left: look again",
    err(new PaymentsTimeoutError(reached)),
    reconcile,
    { type: "reconcile", reason: "timeout" },
  ],
  [
    "last lookup still unknown",
    err(new PaymentsTimeoutError(reached)),
    { ...reconcile, lastAttempt: true },
    {
      type: "needs_reconciliation",
      code: "outcome_unknown",
      message: "outcome still unknown after lookup: withdrawToBank: m",
    },
  ],
  [
    "last lookup meets the first request still in flight: look again until the deadline",
    err(new PaymentsIdempotencyInFlightError(reached)),
    { ...reconcile, lastAttempt: true },
    { type: "reconcile", reason: "in_flight" },
  ],
  [
    "lookup meets a passing 5xx: look again",
    err(new PaymentsServerError(reached)),
    reconcile,
    { type: "reconcile", reason: "server_error" },
  ],
  [
    "lookup meets a dropped connection: look again",
    err(new PaymentsConnectionError(reached)),
    reconcile,
    { type: "reconcile", reason: "connection_error" },
  ],
  [
    "lookup meets the first request still in flight",
    err(new PaymentsIdempotencyInFlightError(reached)),
    reconcile,
    { type: "reconcile", reason: "in_flight" },
  ],
  [
    // The resend is refused (a provider refusing a repeated key): the first may have paid.
    "lookup finds a refusal of the resend",
    err(new PaymentsValidationError(reached)),
    reconcile,
    {
      type: "needs_reconciliation",
      code: "outcome_unknown",
      message:
        "an earlier attempt may have reached the provider, which now refuses: withdrawToBank: m",
    },
  ],
  [
    "400 on a resend after an attempt that may have reached the provider",
    err(new PaymentsValidationError(reached)),
    { ...submit, possiblySent: true },
    {
      type: "needs_reconciliation",
      code: "outcome_unknown",
      message:
        "an earlier attempt may have reached the provider, which now refuses: withdrawToBank: m",
    },
  ],
  [
    "key reused on a resend after an attempt that may have reached the provider",
    err(new PaymentsIdempotencyKeyReusedError(reached)),
    { ...submit, possiblySent: true },
    {
      type: "needs_reconciliation",
      code: "outcome_unknown",
      message:
        "an earlier attempt may have reached the provider, which now refuses: withdrawToBank: m",
    },
  ],
  [
    "confirm lookup refused with a 400",
    err(new PaymentsValidationError(reached)),
    confirm,
    {
      type: "needs_reconciliation",
      code: "outcome_unknown",
      message:
        "an earlier attempt may have reached the provider, which now refuses: withdrawToBank: m",
    },
  ],
  [
    "confirm lookup: 404 not visible yet",
    err(new PaymentsNotFoundError(reached)),
    confirm,
    { type: "confirm" },
  ],
  ["confirm lookup: 5xx", err(new PaymentsServerError(reached)), confirm, { type: "confirm" }],
  ["confirm lookup: timeout", err(new PaymentsTimeoutError(reached)), confirm, { type: "confirm" }],
  [
    "non-idempotent, never sent",
    err(new PaymentsConnectionError(notSent)),
    nonIdem,
    { type: "retry", reason: "connection_error" },
  ],
  [
    "non-idempotent, never sent, last attempt",
    err(new PaymentsConnectionError(notSent)),
    { ...nonIdem, lastAttempt: true },
    {
      type: "needs_reconciliation",
      code: "not_sent",
      message: "never reached the provider after every attempt: withdrawToBank: m",
    },
  ],
  [
    "non-idempotent, timeout after send",
    err(new PaymentsTimeoutError(reached)),
    nonIdem,
    {
      type: "needs_reconciliation",
      code: "outcome_unknown",
      message:
        "the request may have reached the provider and cannot be resent safely: withdrawToBank: m",
    },
  ],
  [
    "non-idempotent, 5xx",
    err(new PaymentsServerError(reached)),
    nonIdem,
    {
      type: "needs_reconciliation",
      code: "outcome_unknown",
      message:
        "the request may have reached the provider and cannot be resent safely: withdrawToBank: m",
    },
  ],
  [
    "non-idempotent, 429",
    err(new PaymentsRateLimitError({ ...reached, retryAfterMs: 100 })),
    nonIdem,
    { type: "rate_limit", delayMs: 100, askedMs: 100 },
  ],
  [
    "non-idempotent, 400",
    err(new PaymentsValidationError(reached)),
    nonIdem,
    { type: "fail", code: "validation_error", message: "withdrawToBank: m" },
  ],
  [
    "unsendable request, never sent before",
    err(badKey()),
    submit,
    { type: "reject", code: "invalid_request", message: NOT_SENT_KEY },
  ],
  [
    "unsendable request, non-idempotent, never sent before",
    err(badKey()),
    nonIdem,
    { type: "reject", code: "invalid_request", message: NOT_SENT_KEY },
  ],
  [
    "unsendable request on a later attempt: the first may have been paid",
    err(badKey()),
    again,
    {
      type: "needs_reconciliation",
      code: "invalid_request",
      message: `${NOT_SENT_KEY}, but an earlier attempt may have been`,
    },
  ],
  [
    "unsendable request on the last of several attempts",
    err(badKey()),
    { ...again, lastAttempt: true },
    {
      type: "needs_reconciliation",
      code: "invalid_request",
      message: `${NOT_SENT_KEY}, but an earlier attempt may have been`,
    },
  ],
  [
    "unsendable request, non-idempotent, sent mark from an earlier run",
    err(badKey()),
    { ...nonIdem, sentBefore: true },
    {
      type: "needs_reconciliation",
      code: "invalid_request",
      message: `${NOT_SENT_KEY}, but an earlier attempt may have been`,
    },
  ],
  [
    "unsendable confirm lookup",
    err(badKey()),
    confirm,
    { type: "needs_reconciliation", code: "invalid_request", message: `lookup: ${NOT_SENT_KEY}` },
  ],
  [
    "unsendable reconcile lookup",
    err(badKey()),
    reconcile,
    { type: "needs_reconciliation", code: "invalid_request", message: `lookup: ${NOT_SENT_KEY}` },
  ],
  [
    "undici refuses before dispatch, first attempt",
    err(toTransportError(undiciRefusal(), "withdrawToBank")),
    submit,
    {
      type: "reject",
      code: "invalid_request",
      message:
        "idempotencyKey: refused by the HTTP client (UND_ERR_INVALID_ARG); the request was not sent",
    },
  ],
  [
    "undici refuses before dispatch, later attempt",
    err(toTransportError(undiciRefusal(), "withdrawToBank")),
    again,
    {
      type: "needs_reconciliation",
      code: "invalid_request",
      message:
        "idempotencyKey: refused by the HTTP client (UND_ERR_INVALID_ARG); the request was not sent, but an earlier attempt may have been",
    },
  ],
  [
    "an invalid-argument error after the status arrived may have reached the server",
    err(toTransportError(undiciRefusal(), "withdrawToBank", true)),
    submit,
    { type: "retry", reason: "connection_error" },
  ],
  [
    "an invalid-argument error after the status arrived, non-idempotent",
    err(toTransportError(undiciRefusal(), "withdrawToBank", true)),
    nonIdem,
    {
      type: "needs_reconciliation",
      code: "outcome_unknown",
      message:
        "the request may have reached the provider and cannot be resent safely: withdrawToBank: connection lost before an answer arrived (UND_ERR_INVALID_ARG)",
    },
  ],
  [
    "an invalid-argument error after the status arrived, confirm lookup",
    err(toTransportError(undiciRefusal(), "withdrawToBank", true)),
    confirm,
    { type: "confirm" },
  ],
];

describe("classify", () => {
  it.each(table)("%s", (_, outcome, ctx, action) => {
    expect(classify(outcome, ctx)).toEqual(action);
  });
});
