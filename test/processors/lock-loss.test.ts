import type { ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { Producer } from "../../src/queues/producer.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import { bullKeys } from "../../src/redis/bullmq-internals.js";
import { keyspace, resultsStreamKey } from "../../src/redis/keys.js";
import { JobResult } from "../../src/results/job-result.js";
import { payoutBatch } from "../fixtures/batches.js";
import { exitOf, spawnWorker } from "../helpers/cli.js";
import { useTestRedis } from "../helpers/redis.js";
import { useSandboxProcess } from "../helpers/sandbox-process.js";
import { waitUntil } from "../helpers/wait-until.js";

// A worker SIGSTOPped past its lock duration while it holds jobs; another worker finishes
// them; then the first continues. It must send nothing more for jobs it no longer owns, and
// write nothing over their state.
const LOCK_MS = 2000;
const CONCURRENCY = 16;
const redis = useTestRedis("lockloss");
const sandbox = useSandboxProcess(["--settle-delay-ms", "20"]);
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill("SIGCONT");
      c.kill("SIGKILL");
      await exitOf(c);
    }
  }
});

const virtualAccounts = (alias: string, n: number): JobInput[] =>
  Array.from({ length: n }, (_, i) => ({
    kind: "collection.virtual-account" as const,
    account: alias,
    batchId: `va-${alias}`,
    reference: `va-${i + 1}`,
    request: { body: { amount: 1000 + i, validFor: 30 } },
  }));

async function stoppedWorkerCase(alias: string, jobs: readonly JobInput[]) {
  const accountId = `acct_${alias}`;
  const key = `sk_sandbox_${alias}_lockloss_0001`;
  await sandbox.addAccount(accountId, key);
  const env = {
    REDIS_URL: redis.url,
    PAYMENTS_API_URL: sandbox.baseUrl,
    MONEYQ_REDIS_PREFIX: redis.prefix,
    MONEYQ_LOG_LEVEL: "warn",
    MONEYQ_LOCK_DURATION_MS: String(LOCK_MS),
    MONEYQ_STALLED_INTERVAL_MS: "1000",
    // 40 a second with 16 jobs at a time: the stopped worker holds jobs waiting for slots.
    MONEYQ_ACCOUNTS: JSON.stringify([
      { alias, apiKey: key, ratePerSecond: 40, concurrency: CONCURRENCY },
    ]),
  };
  const connection = redis.connect();
  const producer = new Producer({
    connection,
    prefix: redis.prefix,
    accounts: [alias],
    maxAttempts: 8,
    retentionMs: 3_600_000,
  });
  const resultsOf = async () =>
    (
      await connection.xrange(
        resultsStreamKey(keyspace(redis.prefix, connection.isCluster), alias),
        "-",
        "+",
      )
    )
      .map(([, fields]) => JobResult.parse(JSON.parse(fields[1] as string)))
      .filter((r) => r.account === alias);

  const stopped = await spawnWorker(env);
  children.push(stopped.child);
  const enqueued = await producer.enqueueMany(jobs);
  await waitUntil(
    async () => (await sandbox.requests(accountId)).length >= 5,
    30_000,
    "the first requests",
  );
  stopped.child.kill("SIGSTOP");
  // Only the stopped worker has run: every active job is one it holds.
  const heldAtStop = await connection.llen(
    bullKeys.active(
      bullKeys.queue(
        redis.prefix,
        accountQueueName(keyspace(redis.prefix, connection.isCluster), alias),
      ),
    ),
  );
  expect(heldAtStop, "jobs the stopped worker held").toBeGreaterThanOrEqual(1);
  const other = await spawnWorker(env);
  children.push(other.child);
  await waitUntil(
    async () => (await resultsOf()).length >= jobs.length,
    90_000,
    "every job's result from the other worker",
  );
  await producer.close();
  other.child.kill("SIGTERM");
  await exitOf(other.child);

  // What the provider saw, each job's state and the results, before the stopped worker continues.
  const seen = await sandbox.requests(accountId);
  const jobKey = (jobId: string) =>
    bullKeys.job(
      bullKeys.queue(
        redis.prefix,
        accountQueueName(keyspace(redis.prefix, connection.isCluster), alias),
      ),
      jobId,
    );
  const states = async () =>
    Promise.all(enqueued.map(async (e) => connection.hgetall(jobKey(e.jobId))));
  const statesBefore = await states();
  const resultsBefore = await resultsOf();

  stopped.child.kill("SIGCONT");
  // Well past its lock renewal, its slots and any request it could have had in hand.
  await new Promise((r) => setTimeout(r, 3 * LOCK_MS));

  const after = await sandbox.requests(accountId, seen.at(-1)?.seq ?? 0);
  expect(after, "requests from the worker that lost its jobs").toEqual([]);
  expect(await states()).toEqual(statesBefore);
  expect(await resultsOf()).toEqual(resultsBefore);
  const perJob = new Map<string, number>();
  for (const r of resultsBefore) perJob.set(r.jobId, (perJob.get(r.jobId) ?? 0) + 1);
  expect(perJob.size).toBe(jobs.length);
  expect([...perJob.values()].every((n) => n === 1)).toBe(true);
  return { accountId, seen, results: resultsBefore, heldAtStop };
}

describe("a worker that lost its jobs", () => {
  it("kinds without an idempotency key: nothing sent after it continues, one request per job at most", async () => {
    const jobs = virtualAccounts("vacct", 48);
    const { seen, results, heldAtStop } = await stoppedWorkerCase("vacct", jobs);
    const creates = seen.filter((r) => r.method === "POST");
    // Each create is an effect at the provider: never two for one job.
    expect(creates.length).toBeLessThanOrEqual(jobs.length);
    const succeeded = results.filter((r) => r.result === "succeeded");
    expect(new Set(succeeded.map((r) => r.upstreamId)).size).toBe(succeeded.length);
    // A job whose request may have left with the stopped worker is reconciled, never resent.
    expect(
      succeeded.length + results.filter((r) => r.result === "needs_reconciliation").length,
    ).toBe(jobs.length);
    expect(creates.length).toBeGreaterThanOrEqual(succeeded.length);
    // Only jobs the stopped worker held can have been left unknown: at most its concurrency.
    const reconciled = results.filter((r) => r.result === "needs_reconciliation").length;
    expect(reconciled).toBeLessThanOrEqual(Math.min(heldAtStop, CONCURRENCY));
  }, 180_000);

  it("payouts: nothing sent after it continues, one effect per key", async () => {
    const jobs = payoutBatch("lockloss", 60, "payouts");
    const { accountId, results } = await stoppedWorkerCase("payouts", jobs);
    expect(new Set(results.map((r) => r.result))).toEqual(new Set(["succeeded"]));
    const answer = (await fetch(`${sandbox.controlUrl}/ledger?accountId=${accountId}`).then((r) =>
      r.json(),
    )) as { data: { entries: { idempotencyKey: string | null; effectId: string | null }[] } };
    const ledger = answer.data.entries;
    const effects = new Map<string, Set<string>>();
    for (const e of ledger) {
      if (e.idempotencyKey === null || e.effectId === null) continue;
      effects.set(e.idempotencyKey, (effects.get(e.idempotencyKey) ?? new Set()).add(e.effectId));
    }
    expect([...effects.values()].filter((s) => s.size > 1)).toEqual([]);
    for (const r of results)
      expect([...(effects.get(r.idempotencyKey) ?? [])]).toEqual([r.upstreamId]);
  }, 180_000);
});
