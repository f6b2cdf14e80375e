export * from "./errors.js";
export { CLIENT_DEFAULTS, type PaymentsClientOptions } from "./options.js";
export {
  type EnvelopeAnswer,
  type OperationData,
  type OperationInput,
  type OperationMethods,
  PaymentsClient,
} from "./payments-client.js";
export {
  DEFAULT_RETRY_POLICY,
  parseRetryAfter,
  type RetryPolicy,
  retryDelayMs,
  shouldRetry,
} from "./retry.js";
