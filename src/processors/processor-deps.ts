import type { PaymentsClient } from "../client/payments-client.js";
import type {
  AccountConfig,
  BooksConfig,
  OutflowConfig,
  PipelineConfig,
} from "../config/load-config.js";
import type { Logger } from "../logger.js";
import type { PipelineMetrics } from "../metrics/pipeline-metrics.js";
import type { LaneHolds } from "../outflow/lane-holds.js";
import type { AccountPauses } from "../queues/account-pauses.js";
import type { WorkHolds } from "../queues/work-holds.js";
import type { Keyspace } from "../redis/keys.js";
import type { JobResult } from "../results/job-result.js";
import type { ResultsStore } from "../results/results-store.js";
import type { JobTracer } from "../tracing/job-tracer.js";
import type { LaneWakes } from "./lane-wakes.js";
import type { LockedWrites } from "./locked-writes.js";
import type { RateGate } from "./rate-gate.js";

/** What the processor of an account queue works with; each step takes the part it needs. */
export interface ProcessorDeps {
  readonly accounts: ReadonlyMap<string, AccountConfig>;
  readonly clients: ReadonlyMap<string, PaymentsClient>;
  readonly gate: RateGate;
  /** Job state writes that check this worker still holds the job. */
  readonly writes: LockedWrites;
  /** Where bulk requests wait for a slot, woken when urgent jobs are enqueued. */
  readonly wakes: LaneWakes;
  readonly results: ResultsStore;
  /** What holds or cancelled work (a batch's meta, a job's hold), and its expiry. */
  readonly holds: WorkHolds;
  readonly pauses: AccountPauses;
  readonly pipeline: PipelineConfig;
  /** Re-checks after success (docs/reconciliation.md). */
  readonly books: BooksConfig;
  /** Velocity limits and insufficient funds holds (docs/safety.md). */
  readonly outflow: OutflowConfig;
  readonly laneHolds: LaneHolds;
  /** Where moneyq's keys live: batches and holds are looked up there. */
  readonly keyspace: Keyspace;
  readonly metrics: PipelineMetrics;
  readonly logger: Logger;
  /** The job's spans (src/tracing); NO_TRACING when tracing is off. */
  readonly tracer: JobTracer;
  /** Called with each terminal result once it is recorded (batch counters, webhooks). */
  readonly onResult?: (result: JobResult) => Promise<void>;
}
