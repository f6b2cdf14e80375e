import { defineConfig } from "vitest/config";

// `npm run test:cluster`: the pipeline, batch and queue suites again, against a real local Redis
// Cluster (three masters, a replica each), and the tests of the cluster itself (test/cluster).
export default defineConfig({
  test: {
    include: [
      "test/cluster/**/*.test.ts",
      "test/batches/*.test.ts",
      "test/queues/*.test.ts",
      "test/processors/account-isolation.test.ts",
      "test/processors/fault-batch.test.ts",
      "test/processors/rate-limit.test.ts",
      "test/processors/shared-pause.test.ts",
      "test/processors/lock-loss.test.ts",
      "test/service/end-to-end.test.ts",
      "test/service/worker-processes.test.ts",
    ],
    // Batches written before batches belonged to their account exist only on a single Redis
    // (a cluster never ran that release): the upgrade is not run on a cluster.
    exclude: ["test/batches/batch-upgrade.test.ts"],
    globalSetup: ["test/setup/cluster-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
