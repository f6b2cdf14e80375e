import type { ErrorCode } from "./error-codes.js";

/**
 * The base of every error moneyq raises on purpose: a stable code from the catalogue
 * (error-codes.ts, docs/errors.md) to match on, never the message's text.
 */
export abstract class MoneyqError extends Error {
  abstract readonly code: ErrorCode;

  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
    // Each class's own name, as a stack trace or a log line shows it.
    this.name = new.target.name;
  }
}
