import type { Registry } from "prom-client";
import type { PaymentsClient } from "../client/payments-client.js";
import type { AccountConfig, Config } from "../config/load-config.js";
import type { Logger } from "../logger.js";
import type { PipelineMetrics } from "../metrics/pipeline-metrics.js";
import type { LaneHolds } from "../outflow/lane-holds.js";
import type { AccountPauses } from "../queues/account-pauses.js";
import type { AccountQueues } from "../queues/account-queues.js";
import type { WorkHolds } from "../queues/work-holds.js";
import type { RedisConnection } from "../redis/connection.js";
import type { RepeatedErrors } from "../redis/repeated-errors.js";
import type { JobResult } from "../results/job-result.js";
import type { ResultsStore } from "../results/results-store.js";
import type { Reversals } from "../results/reversals.js";
import type { JobTracer } from "../tracing/job-tracer.js";
import type { LockedWrites } from "./locked-writes.js";
import type { RateGate } from "./rate-gate.js";
import type { Sweeper } from "./sweeper.js";

/**
 * What the workers run on, built and closed by the composition (src/service/worker-parts.ts):
 * the workers use these parts and close none of them.
 */
export interface WorkerParts {
  readonly config: Config;
  /** The upstream's base URL. */
  readonly baseUrl: string;
  readonly accounts: readonly AccountConfig[];
  /** For the gate, the turns and the queues; each worker opens its blocking connections from it. */
  readonly connection: RedisConnection;
  /** The results store's own connection, which the re-checks share. */
  readonly resultsConnection: RedisConnection;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly tracer: JobTracer;
  /** One client, with a connection pool of its own, per account. */
  readonly clients: ReadonlyMap<string, PaymentsClient>;
  readonly queues: AccountQueues;
  readonly metrics: PipelineMetrics;
  /** The process's log of repeated errors. */
  readonly errors: RepeatedErrors;
  readonly pauses: AccountPauses;
  readonly results: ResultsStore;
  readonly reversals: Reversals;
  readonly gate: RateGate;
  readonly writes: LockedWrites;
  readonly holds: WorkHolds;
  readonly laneHolds: LaneHolds;
  /** The periodic reconciliation's sweeper, when MONEYQ_RECONCILE_EVERY is set. */
  readonly sweeper: Sweeper | undefined;
  readonly onResult?: ((result: JobResult) => Promise<void>) | undefined;
}
