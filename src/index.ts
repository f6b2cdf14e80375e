/**
 * The library's face: what a service that enqueues, reads results, verifies webhooks or runs
 * moneyq in its own process needs. Narrower entries: `moneyq/client`, `moneyq/producer`,
 * `moneyq/sandbox`.
 */
// Every class there is an error a caller of Batches may meet, and its RowIssue.
export * from "./batches/batch-errors.js";
export { BATCH_KINDS, type BatchKind } from "./batches/batch-kinds.js";
export type {
  BatchStatus,
  CancelReport,
  SubmitOptions,
  SubmitReport,
} from "./batches/batch-reports.js";
export { csvRows, jsonRows, type RowSource } from "./batches/batch-rows.js";
export { BATCH_STATES, type BatchState } from "./batches/batch-store.js";
export { Batches } from "./batches/batches.js";
export {
  DEFAULT_RETRY_POLICY,
  type OperationData,
  type OperationInput,
  PaymentsAuthenticationError,
  PaymentsClient,
  type PaymentsClientOptions,
  PaymentsConflictError,
  PaymentsConnectionError,
  PaymentsError,
  type PaymentsErrorCode,
  PaymentsIdempotencyInFlightError,
  PaymentsIdempotencyKeyReusedError,
  PaymentsInsufficientFundsError,
  PaymentsInvalidRequestError,
  PaymentsNotFoundError,
  PaymentsRateLimitError,
  PaymentsResponseError,
  PaymentsServerError,
  PaymentsTimeoutError,
  PaymentsValidationError,
  type RetryPolicy,
  retryDelayMs,
  shouldRetry,
} from "./client/index.js";
export {
  type AccountConfig,
  type Config,
  ConfigError,
  type ConfigIssue,
  loadConfig,
} from "./config/load-config.js";
export { createLogger, type Logger } from "./logger.js";
export { loadProviderProfile } from "./provider/load-profile.js";
export { DEFAULT_PROVIDER_PROFILE, type ProviderProfile } from "./provider/profile.js";
export { type DeadLetter, DeadLetters } from "./queues/dead-letters.js";
export {
  deriveIdempotencyKey,
  type EnqueuedJob,
  EnqueueValidationError,
  IdempotencyKeyReusedError,
  JOB_KINDS,
  type JobInput,
  type JobKind,
  type JobPriority,
  type KeyedJob,
  Producer,
  type ProducerOptions,
} from "./queues/index.js";
export { ReplayConflictError } from "./queues/replay-conflict-error.js";
export { createRedis } from "./redis/connection.js";
export { JobResult, RESULT_KINDS, type ResultKind } from "./results/job-result.js";
export { ResultsStore, type ResultsStoreOptions } from "./results/results-store.js";
export type { Role } from "./service/roles.js";
export {
  closeOnSignals,
  EMBEDDED_DEV_TOKEN,
  type Service,
  type ServiceOptions,
  startService,
  UnsafeRedisError,
} from "./service/start-service.js";
export {
  EVENT_ID_HEADER,
  SIGNATURE_HEADER,
  signWebhook,
  WebhookArgumentError,
} from "./webhooks/moneyq-signature.js";
export type { WebhookHeaders } from "./webhooks/standard-signature.js";
export { type VerifyOptions, verifyWebhook } from "./webhooks/verify-webhook.js";
export { WebhookSecretError } from "./webhooks/webhook-secret.js";
