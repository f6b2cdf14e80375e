import { PaymentsConnectionError, type PaymentsError, PaymentsTimeoutError } from "./errors.js";

/** undici and socket error codes that mean the request never left this machine. */
const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);
const TIMEOUT_CODES = new Set([
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "ETIMEDOUT",
]);

/** Maps an error thrown while sending or reading into the client's hierarchy. */
export function toTransportError(error: unknown, operation: string): PaymentsError {
  const code = errorCode(error);
  const mayHaveReachedServer = !NOT_SENT_CODES.has(code);
  const init = { operation, mayHaveReachedServer, cause: error };
  if (TIMEOUT_CODES.has(code)) {
    const phase = code === "UND_ERR_CONNECT_TIMEOUT" ? "connecting" : "waiting for the answer";
    return new PaymentsTimeoutError({ ...init, message: `${operation}: timed out ${phase}` });
  }
  const what = mayHaveReachedServer
    ? "connection lost before an answer arrived"
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
