import type { JobEnvelope } from "../queues/job-envelope.js";
import type { RedisConnection } from "../redis/connection.js";
import type { ReplicaWaits } from "../redis/replica-waits.js";
import type { BatchIndex } from "./batch-index.js";
import type { BatchesOptions } from "./batch-reports.js";
import type { BatchStore } from "./batch-store.js";
import type { HeldRows } from "./held-rows.js";
import type { UnsealedBatches } from "./unsealed-batches.js";

/** What the parts of Batches (submission, queries, decisions) share, built once by Batches. */
export interface BatchParts {
  readonly redis: BatchRedis;
  readonly options: BatchesOptions;
  readonly store: BatchStore;
  readonly index: BatchIndex;
  readonly replicas: ReplicaWaits;
  readonly unsealed: UnsealedBatches;
}

export type BatchRedis = RedisConnection & {
  moneyqClaimReferences(key: string, batchId: string, ...refs: string[]): Promise<number[]>;
};

/** References are checked and claimed, and report lines read, this many per command. */
export const CHUNK = 1_000;
/**
 * Accepted rows are enqueued this many per pipeline, with a few pipelines in flight: smaller
 * pipelines of BullMQ's per-job script keep less in the air at once (measured in
 * docs/performance.md).
 */
export const SEND_CHUNK = 100;
export const SEND_CHUNKS_IN_FLIGHT = 8;
/** Rows are validated before the key (and, unless given, the batch id) is known; both are set at send. */
export const PENDING_BATCH_ID = "pending";
export const PENDING_KEY = "pending";

/** Accepted rows: the validated request of each, by row and reference. */
export type Held = HeldRows<JobEnvelope["request"]>;

/**
 * The base of Batches' parts: each reaches the connection, the options, the store, the index,
 * the replica waits and the unsealed batches the same way.
 */
export abstract class BatchPart {
  protected readonly redis: BatchRedis;
  protected readonly options: BatchesOptions;
  protected readonly store: BatchStore;
  protected readonly index: BatchIndex;
  protected readonly replicas: ReplicaWaits;
  protected readonly unsealed: UnsealedBatches;

  constructor(parts: BatchParts) {
    this.redis = parts.redis;
    this.options = parts.options;
    this.store = parts.store;
    this.index = parts.index;
    this.replicas = parts.replicas;
    this.unsealed = parts.unsealed;
  }
}
