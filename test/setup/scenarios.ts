/**
 * The long scenarios: whole batches through faults, killed and restarted processes, Redis
 * refusing or far away, deadlines counted in seconds. They run under `npm run test:scenarios`
 * (CI runs it too), so that `npm test` stays a few minutes; every other test file runs under
 * `npm test`. Each took over 10 s on the project's 2-core machine (docs/development.md).
 */

/**
 * Scenarios that mostly wait (a lease, a backoff, a process starting) and assert orders and
 * counts, never a rate or a latency: they run two at a time, in this order, longest first
 * (test/setup/listed-order.ts).
 */
export const WAITING_SCENARIOS = [
  "test/batches/submission-oom.test.ts",
  "test/provider/dialect-fault-batch.test.ts",
  "test/processors/classification.test.ts",
  "test/outflow/insufficient-funds.test.ts",
  "test/cli/provider-check-submit.test.ts",
  "test/provider/independent-provider.test.ts",
  "test/service/redis-at-start.test.ts",
  "test/cli/service-commands.test.ts",
  "test/processors/reconcile-sweep.test.ts",
  "test/processors/rechecks.test.ts",
  "test/cli/demo-dialect.test.ts",
  "test/processors/repeated-keys-fault-batch.test.ts",
] as const;

/**
 * Scenarios that measure at the sandbox (rates in a sliding second, a latency, a deadline met
 * at a rate) or hold short locks and grace periods: each runs alone after the others, so that
 * no other file competes for the two cores.
 */
export const TIMED_SCENARIOS = [
  "test/cli/provider-check-gate.test.ts",
  "test/processors/confirm-deadline.test.ts",
  "test/processors/fault-batch.test.ts",
  "test/processors/lanes.test.ts",
  "test/processors/lock-loss.test.ts",
  "test/processors/rate-limit.test.ts",
  "test/processors/redis-latency.test.ts",
  "test/processors/shared-pause.test.ts",
  "test/processors/storm-isolation.test.ts",
  "test/service/redis-out-of-memory.test.ts",
  "test/service/shared-accounts.test.ts",
  "test/service/worker-processes.test.ts",
] as const;

export const SCENARIO_FILES = [...WAITING_SCENARIOS, ...TIMED_SCENARIOS] as const;
