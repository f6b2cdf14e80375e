export type { ApiDeps, Readiness } from "./api/api-deps.js";
export { buildApi, type RunningApi, startApi } from "./api/start-api.js";
export {
  BatchFileError,
  BatchNotCancellableError,
  BatchNotFoundError,
  BatchRefusedError,
  type RowIssue,
} from "./batches/batch-errors.js";
export { BATCH_KINDS, type BatchColumn, type BatchKind } from "./batches/batch-kinds.js";
export { csvRows, jsonRows, type RowSource } from "./batches/batch-rows.js";
export {
  BATCH_STATES,
  Batches,
  type BatchState,
  type BatchStatus,
  type CancelReport,
  type SubmitOptions,
  type SubmitReport,
} from "./batches/batches.js";
export * from "./client/index.js";
export * from "./config.js";
export * from "./contract/index.js";
export { createLogger, type Logger } from "./logger.js";
export {
  closeOnSignals,
  EMBEDDED_DEV_TOKEN,
  type Service,
  type ServiceOptions,
  startService,
  UnsafeRedisError,
} from "./main.js";
export { createMetricsRegistry } from "./metrics/metrics-registry.js";
export {
  type MetricsServerOptions,
  type RunningMetricsServer,
  startMetricsServer,
} from "./metrics/metrics-server.js";
export { createPipelineMetrics, type PipelineMetrics } from "./metrics/pipeline-metrics.js";
export { type RedisMetricsOptions, registerRedisMetrics } from "./metrics/redis-metrics.js";
export { type Action, classify, type Outcome, type Phase } from "./processors/classify.js";
export {
  type RunningWorkers,
  type StartWorkersOptions,
  startWorkers,
} from "./processors/start-workers.js";
export { type AccountPause, AccountPauses } from "./queues/account-pauses.js";
export { type DeadLetter, DeadLetters } from "./queues/dead-letters.js";
export { EnqueueValidationError } from "./queues/enqueue-error.js";
export { deriveIdempotencyKey, jobIdFor } from "./queues/idempotency-key.js";
export { type JobEnvelope, JobEnvelopeSchema, type JobInput } from "./queues/job-envelope.js";
export { JOB_KINDS, type JobKind } from "./queues/job-kinds.js";
export { type EnqueuedJob, Producer, type ProducerOptions } from "./queues/producer.js";
export { accountQueueName } from "./queues/queue-names.js";
export { createRedis } from "./redis-connection.js";
export { checkRedisSafety, type RedisSafety } from "./redis-safety.js";
export { JobResult, RESULT_KINDS, type ResultKind } from "./results/job-result.js";
export { ResultsStore } from "./results/results-store.js";
export {
  EVENT_ID_HEADER,
  SIGNATURE_HEADER,
  signWebhook,
  verifyWebhook,
} from "./results/webhook-signature.js";
export { ROLES, type Role } from "./service-roles.js";
