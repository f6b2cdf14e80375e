import type { ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { DEMO_API_KEY } from "../../src/sandbox/index.js";
import { payoutBatch } from "../fixtures/batches.js";
import { exitOf, spawnWorker } from "../helpers/cli.js";
import { expectExactlyOnce } from "../helpers/exactly-once.js";
import { usePipeline } from "../helpers/pipeline.js";
import { waitUntil } from "../helpers/wait-until.js";

const GRACE_MS = 4000;
const p = usePipeline(
  {
    MONEYQ_CONCURRENCY: "32",
    MONEYQ_LOCK_DURATION_MS: "2000",
    MONEYQ_STALLED_INTERVAL_MS: "1000",
    MONEYQ_SHUTDOWN_GRACE_MS: String(GRACE_MS),
  },
  {
    settleDelayMs: 20,
    startWorkers: false,
    sandboxAccounts: [
      {
        accountId: "acct_demo",
        apiKey: DEMO_API_KEY,
        faults: { dropAfterCommitRate: 0.05, seed: 5 },
      },
    ],
  },
);

const children: ChildProcess[] = [];
async function worker(): Promise<ChildProcess> {
  const { child } = await spawnWorker({ ...p.env(), MONEYQ_LOG_LEVEL: "warn" });
  children.push(child);
  return child;
}
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill("SIGKILL");
      await exitOf(c);
    }
  }
});

describe("worker processes", () => {
  it("a worker killed with SIGKILL mid-batch, then restarted: one result per job, one effect per key", async () => {
    const before = (await p.results()).length;
    const enqueued = await p.producer().enqueueMany(payoutBatch("sigkill", 2000));
    const first = await worker();
    await waitUntil(async () => (await p.results()).length - before >= 600, 60_000, "600 results");
    first.kill("SIGKILL");
    await exitOf(first);
    await worker();
    const results = (await p.waitForResults(before + 2000, 200_000)).slice(before);
    await expectExactlyOnce(p.sb, "acct_demo", enqueued, results);
  }, 300_000);

  it("SIGTERM mid-batch: exits within the grace period, and no job is lost or paid twice", async () => {
    const before = (await p.results()).length;
    const enqueued = await p.producer().enqueueMany(payoutBatch("sigterm", 1000));
    const first = await worker();
    await waitUntil(async () => (await p.results()).length - before >= 200, 60_000, "200 results");
    const asked = Date.now();
    first.kill("SIGTERM");
    expect(await exitOf(first)).toBe(0);
    expect(Date.now() - asked).toBeLessThan(GRACE_MS + 3000);
    await worker();
    const results = (await p.waitForResults(before + 1000, 200_000)).slice(before);
    await expectExactlyOnce(p.sb, "acct_demo", enqueued, results);
  }, 300_000);
});
