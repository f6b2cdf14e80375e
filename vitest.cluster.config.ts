import { defineConfig } from "vitest/config";
import { twoGroups } from "./test/setup/two-groups.js";

/** Batch and queue suites: orders and counts, no rate or latency measured; two at a time. */
const WAITING = [
  "test/batches/*.test.ts",
  "test/queues/*.test.ts",
  "test/service/end-to-end.test.ts",
];

/**
 * Batches written before batches belonged to their account exist only on a single Redis (a
 * cluster never ran that release): the upgrade is not run on a cluster. The submission that
 * meets Redis out of memory runs on a Redis of its own, never on the cluster.
 */
const NOT_ON_A_CLUSTER = [
  "test/batches/batch-upgrade.test.ts",
  "test/batches/submission-oom.test.ts",
];

/** Lane order counted in requests already under way: with another file busy, more are. */
const LANE_ORDER = ["test/batches/batch-priority.test.ts", "test/queues/unlaned-backlog.test.ts"];

/**
 * What measures rates, holds short locks, kills processes or nodes, or changes a node's
 * settings: each file alone, after the others.
 */
const TIMED = [
  ...LANE_ORDER,
  "test/cluster/**/*.test.ts",
  "test/processors/account-isolation.test.ts",
  "test/processors/fault-batch.test.ts",
  "test/processors/rate-limit.test.ts",
  "test/processors/shared-pause.test.ts",
  "test/processors/lock-loss.test.ts",
  "test/service/worker-processes.test.ts",
];

// `npm run test:cluster`: the pipeline, batch and queue suites again, against a real local Redis
// Cluster (three masters, a replica each), and the tests of the cluster itself (test/cluster).
export default defineConfig({
  test: {
    exclude: NOT_ON_A_CLUSTER,
    globalSetup: ["test/setup/cluster-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: twoGroups(
      { name: "waiting", include: WAITING, exclude: [...NOT_ON_A_CLUSTER, ...LANE_ORDER] },
      { name: "timed", include: TIMED },
    ),
  },
});
