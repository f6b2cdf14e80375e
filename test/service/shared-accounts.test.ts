import type { ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import type { EnqueuedJob } from "../../src/queues/producer.js";
import { bankPayout } from "../fixtures/batches.js";
import { exitOf, spawnWorker } from "../helpers/cli.js";
import { expectExactlyOnce } from "../helpers/exactly-once.js";
import { usePipeline } from "../helpers/pipeline.js";
import { waitUntil } from "../helpers/wait-until.js";

// Two worker processes share many accounts through their turns (processors/account-turns.ts),
// each serving at most a few at once; one is killed mid-run and the other takes its accounts
// over once their leases end.
const KEY = "sk_sandbox_shared_accounts_0001";
const ACCOUNTS = Array.from({ length: 20 }, (_, i) => `s${i}`);
const ROWS = 30;

const p = usePipeline(
  {
    MONEYQ_ACCOUNTS: JSON.stringify(
      ACCOUNTS.map((alias) => ({ alias, apiKey: KEY, ratePerSecond: 20 })),
    ),
    MONEYQ_MAX_ACTIVE_ACCOUNTS: "6",
    MONEYQ_LOCK_DURATION_MS: "2000",
    MONEYQ_STALLED_INTERVAL_MS: "1000",
  },
  {
    settleDelayMs: 20,
    startWorkers: false,
    sandboxAccounts: [{ accountId: "acct_shared", apiKey: KEY }],
  },
);

const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill("SIGKILL");
      await exitOf(c);
    }
  }
});

/** The accounts a worker process sent requests for, from its metrics. */
async function accountsServed(metricsUrl: string): Promise<Set<string>> {
  const text = await (await fetch(metricsUrl)).text();
  const served = new Set<string>();
  for (const line of text.split("\n")) {
    const account = /^moneyq_upstream_requests_total\{[^}]*account="([^"]+)"[^}]*\} (\d+)/.exec(
      line,
    );
    if (account && Number(account[2]) > 0) served.add(account[1] as string);
  }
  return served;
}

describe("worker processes sharing many accounts", () => {
  it("both serve the accounts; one killed mid-run, every row still ends once", async () => {
    const enqueued: EnqueuedJob[] = await p
      .producer()
      .enqueueMany(
        ACCOUNTS.flatMap((account) =>
          Array.from({ length: ROWS }, (_, i) => bankPayout("shared", `r${i}`, account)),
        ),
      );
    const env = { ...p.env(), MONEYQ_LOG_LEVEL: "warn" };
    const [first, second] = await Promise.all([spawnWorker(env), spawnWorker(env)]);
    children.push(first.child, second.child);
    const total = enqueued.length;
    await waitUntil(async () => (await p.results()).length >= total / 3, 60_000, "a third done");
    const [servedByFirst, servedBySecond] = await Promise.all([
      accountsServed(first.metricsUrl),
      accountsServed(second.metricsUrl),
    ]);
    first.child.kill("SIGKILL");
    await exitOf(first.child);

    const results = await p.waitForResults(total, 120_000);
    await expectExactlyOnce(p.sb, "acct_shared", enqueued, results);
    expect(servedByFirst.size).toBeGreaterThan(0);
    expect(servedBySecond.size).toBeGreaterThan(0);
    // The survivor served what the killed one held, and every account was served.
    const servedAfter = await accountsServed(second.metricsUrl);
    expect(new Set([...servedByFirst, ...servedAfter])).toEqual(new Set(ACCOUNTS));
  }, 240_000);
});
