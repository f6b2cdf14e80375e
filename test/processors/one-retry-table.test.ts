import { describe, expect, it } from "vitest";
import * as clientErrors from "../../src/client/errors.js";
import { PaymentsError } from "../../src/client/errors.js";
import { shouldRetry } from "../../src/client/retry.js";
import { type ClassifyContext, classify } from "../../src/processors/classify.js";

/** Every error class the client defines, found by what it is, so a new one is held here too. */
const errorClasses = Object.entries(clientErrors).filter(
  (entry): entry is [string, typeof PaymentsError] =>
    typeof entry[1] === "function" &&
    (entry[1] === PaymentsError || entry[1].prototype instanceof PaymentsError),
);

/** What shouldRetry answers: another attempt of an idempotent request, with the same key. */
const firstAttempt: ClassifyContext = {
  phase: "submit",
  idempotent: true,
  lastAttempt: false,
  sentBefore: false,
};

const init = {
  operation: "withdrawToBank",
  message: "m",
  mayHaveReachedServer: true,
  retryAfterMs: 1_000,
  field: "idempotencyKey",
  rule: "must be visible ASCII",
};

describe("one retry table: the client's shouldRetry and the workers' classifier agree", () => {
  it("finds every error class of the client", () => {
    expect(errorClasses.length).toBeGreaterThanOrEqual(14);
  });

  it.each(errorClasses)("%s", (_, ErrorClass) => {
    const error = new ErrorClass(init as never);
    const action = classify({ type: "error", error }, firstAttempt);
    const workersRetry = action.type === "retry" || action.type === "rate_limit";
    expect(shouldRetry(error)).toBe(workersRetry);
    if (action.type === "retry") expect(action.reason).not.toBe("unexpected");
  });

  it("an error that is not the client's: the workers resend with the same key, a caller is told no", () => {
    const error = new TypeError("x");
    expect(classify({ type: "error", error }, firstAttempt)).toEqual({
      type: "retry",
      reason: "unexpected",
    });
    expect(shouldRetry(error)).toBe(false);
  });
});
