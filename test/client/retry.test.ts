import { describe, expect, it } from "vitest";
import {
  DEFAULT_RETRY_POLICY,
  PaymentsAuthenticationError,
  PaymentsConnectionError,
  type PaymentsError,
  PaymentsIdempotencyInFlightError,
  PaymentsIdempotencyKeyReusedError,
  PaymentsInsufficientFundsError,
  PaymentsNotFoundError,
  PaymentsRateLimitError,
  PaymentsResponseError,
  PaymentsServerError,
  PaymentsTimeoutError,
  PaymentsValidationError,
  parseRetryAfter,
  retryDelayMs,
  shouldRetry,
} from "../../src/client/index.js";
import { toTransportError } from "../../src/client/transport-error.js";

const init = { operation: "withdrawToBank", message: "m", mayHaveReachedServer: true };
const rateLimited = (retryAfterMs: number | undefined) =>
  new PaymentsRateLimitError({ ...init, retryAfterMs });

describe("shouldRetry", () => {
  const table: [string, unknown, boolean][] = [
    ["validation", new PaymentsValidationError(init), false],
    ["insufficient funds", new PaymentsInsufficientFundsError(init), false],
    ["authentication", new PaymentsAuthenticationError(init), false],
    ["not found", new PaymentsNotFoundError(init), false],
    ["key reused", new PaymentsIdempotencyKeyReusedError(init), false],
    ["in flight", new PaymentsIdempotencyInFlightError(init), true],
    ["rate limited", rateLimited(1000), true],
    ["server error", new PaymentsServerError(init), true],
    ["timeout", new PaymentsTimeoutError(init), true],
    ["connection", new PaymentsConnectionError(init), true],
    ["invalid response", new PaymentsResponseError(init), true],
    [
      "success: true in an unreadable body: its effect is certain",
      new PaymentsResponseError({
        ...init,
        definiteAnswer: { message: "ok", data: undefined, unreadable: "not an object" },
      }),
      false,
    ],
    ["a programming error", new TypeError("x"), false],
    ["not an error", "oops", false],
  ];
  it.each(table)("%s -> %s", (_, error, expected) => {
    expect(shouldRetry(error)).toBe(expected);
  });
});

describe("retryDelayMs", () => {
  const server = new PaymentsServerError(init);
  // [attempt, random, expected]: equal jitter between half and all of min(max, base * 2^(attempt-1))
  const table: [number, number, number][] = [
    [1, 0, 250],
    [1, 1, 500],
    [2, 0, 500],
    [2, 0.5, 750],
    [3, 1, 2000],
    [7, 1, 30_000],
    [7, 0, 15_000],
    [40, 1, 30_000],
    [0, 1, 500],
  ];
  it.each(table)("attempt %i, random %f -> %i ms", (attempt, random, expected) => {
    expect(retryDelayMs(attempt, server, DEFAULT_RETRY_POLICY, () => random)).toBe(expected);
  });

  const rateTable: [number | undefined, number, number][] = [
    [2000, 0, 2000],
    [2000, 1, 2200],
    [30_000, 1, 31_000],
    [10_000_000, 0, 300_000],
    [undefined, 1, 500],
  ];
  it.each(rateTable)("Retry-After %s ms, random %f -> %i ms", (after, random, expected) => {
    expect(retryDelayMs(1, rateLimited(after), DEFAULT_RETRY_POLICY, () => random)).toBe(expected);
  });

  it("honours a custom policy", () => {
    expect(
      retryDelayMs(3, server, { baseDelayMs: 10, maxDelayMs: 25, maxRetryAfterMs: 1 }, () => 1),
    ).toBe(25);
  });
});

describe("parseRetryAfter", () => {
  const now = Date.parse("2026-11-21T10:00:00Z");
  const table: [string | undefined, number | undefined][] = [
    ["3", 3000],
    ["0.5", 500],
    ["Sat, 21 Nov 2026 10:00:04 GMT", 4000],
    ["Sat, 21 Nov 2026 09:59:00 GMT", 0],
    ["soon", undefined],
    ["", undefined],
    [undefined, undefined],
  ];
  it.each(table)("%s -> %s", (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});

describe("toTransportError", () => {
  const table: [string, string, string, boolean][] = [
    ["ECONNREFUSED", "PaymentsConnectionError", "connection_error", false],
    ["ENOTFOUND", "PaymentsConnectionError", "connection_error", false],
    ["UND_ERR_CONNECT_TIMEOUT", "PaymentsTimeoutError", "timeout", false],
    ["UND_ERR_HEADERS_TIMEOUT", "PaymentsTimeoutError", "timeout", true],
    ["UND_ERR_BODY_TIMEOUT", "PaymentsTimeoutError", "timeout", true],
    ["UND_ERR_SOCKET", "PaymentsConnectionError", "connection_error", true],
    ["ECONNRESET", "PaymentsConnectionError", "connection_error", true],
    ["EPIPE", "PaymentsConnectionError", "connection_error", true],
  ];
  it.each(table)("%s -> %s, reached=%s", (code, name, stable, reached) => {
    const cause = Object.assign(new Error("x"), { code });
    const e: PaymentsError = toTransportError(cause, "getOrder");
    expect(e.name).toBe(name);
    expect(e.code).toBe(stable);
    expect(e.mayHaveReachedServer).toBe(reached);
    expect(e.cause).toBe(cause);
  });

  it("reads the code of a wrapped cause", () => {
    const inner = Object.assign(new Error("x"), { code: "ECONNREFUSED" });
    const e = toTransportError(new Error("fetch failed", { cause: inner }), "getOrder");
    expect(e.mayHaveReachedServer).toBe(false);
  });
});
