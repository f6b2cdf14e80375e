import {
  PaymentsConnectionError,
  type PaymentsError,
  PaymentsInvalidRequestError,
  PaymentsTimeoutError,
} from "./errors.js";
import { HEADER_FIELDS } from "./request-check.js";
import { NOT_WRITTEN_BY_DEADLINE } from "./written-by.js";

/** undici and socket error codes that mean the request never left this machine. */
const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
  NOT_WRITTEN_BY_DEADLINE,
]);
/** The request was refused as built, before anything was written: it cannot be sent at all. */
const INVALID_REQUEST_CODES = new Set([
  "UND_ERR_INVALID_ARG",
  "ERR_INVALID_ARG_TYPE",
  "ERR_INVALID_ARG_VALUE",
  "ERR_INVALID_CHAR",
  "ERR_INVALID_HTTP_TOKEN",
]);
const TIMEOUT_CODES = new Set([
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "ETIMEDOUT",
]);

/**
 * Maps an error thrown while sending or reading into the client's hierarchy. `answered`: the
 * status had arrived, so the request reached the server whatever the error's code says.
 */
export function toTransportError(
  error: unknown,
  operation: string,
  answered = false,
): PaymentsError {
  const code = errorCode(error);
  if (!answered && INVALID_REQUEST_CODES.has(code)) {
    return new PaymentsInvalidRequestError({
      operation,
      field: refusedInput(error),
      rule: `refused by the HTTP client (${code})`,
      cause: error,
    });
  }
  const mayHaveReachedServer = answered || !NOT_SENT_CODES.has(code);
  const init = { operation, mayHaveReachedServer, cause: error };
  if (TIMEOUT_CODES.has(code)) {
    const phase = code === "UND_ERR_CONNECT_TIMEOUT" ? "connecting" : "waiting for the answer";
    return new PaymentsTimeoutError({ ...init, message: `${operation}: timed out ${phase}` });
  }
  const what = mayHaveReachedServer
    ? "connection lost before an answer arrived"
    : code === NOT_WRITTEN_BY_DEADLINE
      ? "not written to a connection by its deadline, so not sent"
      : "could not connect to the Payments API";
  return new PaymentsConnectionError({ ...init, message: `${operation}: ${what} (${code})` });
}

function errorCode(error: unknown): string {
  if (error && typeof error === "object") {
    const own = (error as { code?: unknown }).code;
    if (typeof own === "string") return own;
    const cause = (error as { cause?: unknown }).cause;
    if (cause && typeof cause === "object") {
      const inner = (cause as { code?: unknown }).code;
      if (typeof inner === "string") return inner;
    }
  }
  return "UNKNOWN";
}

/** "invalid idempotencykey header" names the header; anything else is the request as a whole. */
function refusedInput(error: unknown): string {
  const message = error instanceof Error ? error.message : "";
  const header = /^invalid (\S+) header$/.exec(message)?.[1]?.toLowerCase();
  if (header === undefined) return "request";
  return HEADER_FIELDS[header] ?? `${header} header`;
}
