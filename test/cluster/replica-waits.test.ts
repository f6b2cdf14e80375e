import { afterEach, describe, expect, it } from "vitest";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { keyspace } from "../../src/redis/keys.js";
import { NotReplicatedError, ReplicaWaits } from "../../src/redis/replica-waits.js";
import { nodePid, useOwnCluster } from "../helpers/own-cluster.js";
import { waitFor } from "../helpers/wait-until.js";

// Run by `npm run test:cluster`, on a cluster of its own: its replicas are stopped (SIGSTOP) for
// seconds at a time. A stopped replica keeps its connection, so its master still counts it online
// and WAIT waits for it: a replica that lags, as far as the master can tell.
const VA_PATH = "/transaction/collection/virtual-account";
const own = useOwnCluster({ MONEYQ_RATE_LIMIT_PER_SECOND: "50" });

/** Replicas stopped by the test, by process id: a stopped server cannot be asked its own. */
const stopped: number[] = [];
async function stopReplica(): Promise<void> {
  const { replicas } = await own.shardOf();
  expect(replicas).toHaveLength(1);
  const pid = await nodePid(replicas[0] as string);
  process.kill(pid, "SIGSTOP");
  stopped.push(pid);
}
async function continueReplicas(): Promise<void> {
  for (const pid of stopped.splice(0)) process.kill(pid, "SIGCONT");
}
afterEach(continueReplicas);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function vaRequests(): Promise<number> {
  const accountId = (await own.sb.control("GET", "/accounts")).body.data.accounts[0].accountId;
  const requests = (await own.sb.control("GET", "/requests", { query: { accountId } })).body.data
    .requests as { method: string; path: string }[];
  return requests.filter((r) => r.method === "POST" && r.path.endsWith(VA_PATH)).length;
}

const virtualAccount = (key: string, notBefore?: string): JobInput => ({
  kind: "collection.virtual-account",
  account: "default",
  idempotencyKey: key,
  request: { body: { amount: 1500, validFor: 30 } },
  ...(notBefore !== undefined && { notBefore }),
});

describe("writes a failover must not lose wait for the replicas", () => {
  it("answers replicated while the replica acknowledges, and not replicated while it is stopped", async () => {
    const waits = new ReplicaWaits(own.connection(), keyspace(own.config().redisPrefix, true), 300);
    expect(await waits.replicated("default")).toBe(true);
    await stopReplica();
    expect(await waits.replicated("default")).toBe(false);
    const refused = await waits.ensure("default").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(NotReplicatedError);
    expect(refused).toMatchObject({ code: "redis_not_replicated" });
    await continueReplicas();
    await waitFor(
      () => waits.replicated("default"),
      (ok) => ok,
      15_000,
      "the replica acknowledging again",
    );
  });

  it("refuses an enqueue its replica has not acknowledged; the same enqueue later makes one job", async () => {
    // Counted from before the refusal: the refused enqueue's job may run once the replica is back.
    const before = await vaRequests();
    await stopReplica();
    const refused = await own
      .producer()
      .enqueue(virtualAccount("va-enqueue"))
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "redis_not_replicated" });
    await continueReplicas();
    const job = await waitFor(
      () =>
        own
          .producer()
          .enqueue(virtualAccount("va-enqueue"))
          .catch(() => undefined),
      (enqueued) => enqueued !== undefined,
      15_000,
      "the enqueue accepted once the replica is back",
    );
    const results = await waitFor(
      () => own.results(),
      (found) => found.some((r) => r.jobId === job?.jobId),
      20_000,
      "the job's result",
    );
    expect(results.filter((r) => r.jobId === job?.jobId)).toMatchObject([{ result: "succeeded" }]);
    expect((await vaRequests()) - before).toBe(1);
  });

  it("tells an operator an account is paused only once the replica has the pause", async () => {
    await stopReplica();
    const refused = await own
      .workers()
      .pauses.pause("default", "maintenance")
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "redis_not_replicated" });
    await continueReplicas();
    await waitFor(
      () =>
        own
          .workers()
          .pauses.pause("default", "maintenance")
          .then(
            () => true,
            () => false,
          ),
      (paused) => paused,
      15_000,
      "the pause acknowledged once the replica is back",
    );
    expect((await own.workers().pauses.list()).map((p) => p.account)).toEqual(["default"]);
    await own.workers().pauses.resume("default");
  });

  it("sends a keyless request only once its sent record is on the replica", async () => {
    const before = await vaRequests();
    const due = Date.now() + 1_500;
    const job = await own
      .producer()
      .enqueue(virtualAccount("va-sent", new Date(due).toISOString()));
    await stopReplica();
    // The job comes due while the replica is stopped: its request is refused at the gate, again
    // and again, and never leaves.
    await sleep(due - Date.now() + 3_000);
    const missed = (await own.workers().metrics.rateSlotsMissed.get()).values.reduce(
      (sum, v) => sum + v.value,
      0,
    );
    expect(missed).toBeGreaterThan(0);
    expect(await vaRequests()).toBe(before);
    await continueReplicas();
    const results = await waitFor(
      () => own.results(),
      (found) => found.some((r) => r.jobId === job.jobId),
      20_000,
      "the job's result once the replica is back",
    );
    expect(results.filter((r) => r.jobId === job.jobId)).toMatchObject([{ result: "succeeded" }]);
    expect((await vaRequests()) - before).toBe(1);
  });
});
