export { EnqueueValidationError, IdempotencyKeyReusedError } from "./enqueue-error.js";
export { deriveIdempotencyKey } from "./idempotency-key.js";
export type { JobEnvelope, JobInput } from "./job-envelope.js";
export { JOB_KINDS, type JobKind } from "./job-kinds.js";
export type { JobPriority } from "./lanes.js";
export { type EnqueuedJob, type KeyedJob, Producer, type ProducerOptions } from "./producer.js";
