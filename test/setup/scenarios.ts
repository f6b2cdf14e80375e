/**
 * The long scenarios: whole batches through faults, killed and restarted processes, Redis
 * refusing or far away, deadlines counted in seconds. They run under `npm run test:scenarios`
 * (CI runs it too), so that `npm test` stays a few minutes; every other test file runs under
 * `npm test`. Each took over 10 s on the project's 2-core machine (docs/development.md).
 */
export const SCENARIO_FILES = [
  "test/batches/submission-oom.test.ts",
  "test/cli/demo-dialect.test.ts",
  "test/cli/provider-check-gate.test.ts",
  "test/cli/provider-check-submit.test.ts",
  "test/cli/service-commands.test.ts",
  "test/outflow/insufficient-funds.test.ts",
  "test/processors/classification.test.ts",
  "test/processors/confirm-deadline.test.ts",
  "test/processors/fault-batch.test.ts",
  "test/processors/lanes.test.ts",
  "test/processors/lock-loss.test.ts",
  "test/processors/rate-limit.test.ts",
  "test/processors/rechecks.test.ts",
  "test/processors/reconcile-sweep.test.ts",
  "test/processors/redis-latency.test.ts",
  "test/processors/repeated-keys-fault-batch.test.ts",
  "test/processors/shared-pause.test.ts",
  "test/processors/storm-isolation.test.ts",
  "test/provider/dialect-fault-batch.test.ts",
  "test/provider/independent-provider.test.ts",
  "test/service/redis-at-start.test.ts",
  "test/service/redis-out-of-memory.test.ts",
  "test/service/shared-accounts.test.ts",
  "test/service/worker-processes.test.ts",
] as const;
