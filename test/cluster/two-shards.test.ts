import type { Cluster } from "ioredis";
import { beforeAll, describe, expect, it } from "vitest";
import { consumeResults, resultStreams } from "../../examples/results-consumer.js";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import { bullKeys } from "../../src/redis/bullmq-internals.js";
import {
  accountPauseKey,
  backlogKey,
  batchIndexBuiltKey,
  batchIndexKey,
  batchKeys,
  batchReferencesKey,
  fingerprintKey,
  jobHoldKey,
  keyspace,
  lanePassKey,
  legacyJobKeys,
  rateKeys,
  replayLockKey,
  replicationMarkKey,
  resultMarkerKey,
  resultsStreamKey,
} from "../../src/redis/keys.js";
import { pingRedis } from "../../src/redis/private-redis.js";
import { checkRedisSafety } from "../../src/redis/safety.js";
import { payoutBatch } from "../fixtures/batches.js";
import { expectExactlyOnce } from "../helpers/exactly-once.js";
import { usePipeline } from "../helpers/pipeline.js";

// Run by `npm run test:cluster` only: it needs the local cluster of test/setup/cluster-setup.ts.
const FIRST_KEY = "sk_sandbox_shard_first_0001";
const SECOND_KEY = "sk_sandbox_shard_second_001";
const CANDIDATES = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"];

/** The two accounts, chosen (before the pipeline starts) so that they live on two masters. */
const accounts: string[] = [];
const env: Record<string, string> = { MONEYQ_RATE_LIMIT_PER_SECOND: "500" };

beforeAll(async () => {
  const chosen = await accountsOnTwoMasters();
  accounts.push(...chosen);
  env.MONEYQ_ACCOUNTS = JSON.stringify([
    { alias: chosen[0], apiKey: FIRST_KEY },
    { alias: chosen[1], apiKey: SECOND_KEY },
  ]);
});

const p = usePipeline(env, {
  settleDelayMs: 20,
  sandboxAccounts: [
    { accountId: "acct_shard_first", apiKey: FIRST_KEY },
    { accountId: "acct_shard_second", apiKey: SECOND_KEY },
  ],
});

async function accountsOnTwoMasters(): Promise<[string, string]> {
  const admin = p.redis.connect() as Cluster;
  const owner = async (alias: string) => masterOfSlot(admin, await slotOf(admin, `{${alias}}`));
  const first = CANDIDATES[0] as string;
  const home = await owner(first);
  for (const other of CANDIDATES.slice(1)) if ((await owner(other)) !== home) return [first, other];
  throw new Error("no two candidate aliases on different masters");
}

async function slotOf(cluster: Cluster, key: string): Promise<number> {
  return Number(await cluster.cluster("KEYSLOT", key));
}

async function masterOfSlot(cluster: Cluster, slot: number): Promise<string> {
  const ranges = await cluster.cluster("SLOTS");
  const range = ranges.find(([from, to]) => slot >= from && slot <= to);
  const master = range?.[2];
  if (!master) throw new Error(`no master serves slot ${slot}`);
  return `${master[0]}:${master[1]}`;
}

/** Every key moneyq and BullMQ write for one account's work. */
function keysOf(prefix: string, account: string): string[] {
  const space = keyspace(prefix, true);
  const queue = bullKeys.queue(prefix, accountQueueName(space, account));
  return [
    resultsStreamKey(space, account),
    resultMarkerKey(space, account, "j1"),
    legacyJobKeys.resultMarker(space, account, "j1"),
    legacyJobKeys.fingerprint(space, account, "j1"),
    backlogKey(space, account),
    fingerprintKey(space, account, "j1"),
    ...Object.values(batchKeys(space, account, "b1")),
    batchIndexKey(space, account),
    batchIndexBuiltKey(space, account),
    batchReferencesKey(space, account),
    ...Object.values(rateKeys(space, account)),
    accountPauseKey(space, account),
    replayLockKey(space, account, "j1"),
    lanePassKey(space, account),
    replicationMarkKey(space, account),
    jobHoldKey(space, account, "j1"),
    `${queue}:wait`,
    `${queue}:active`,
    bullKeys.prioritized(queue),
    bullKeys.job(queue, "j1"),
    bullKeys.lock(queue, "j1"),
  ];
}

describe("two accounts on a Redis Cluster", () => {
  it("each account's keys share one slot, and the two accounts live on different masters", async () => {
    const admin = p.connection() as Cluster;
    const homes = new Set<string>();
    for (const account of accounts) {
      const slots = new Set<number>();
      for (const key of keysOf(p.config().redisPrefix, account))
        slots.add(await slotOf(admin, key));
      expect([...slots]).toEqual([await slotOf(admin, `{${account}}`)]);
      homes.add(await masterOfSlot(admin, [...slots][0] as number));
    }
    expect(homes.size).toBe(2);
  });

  it("jobs of both accounts enqueued together end with one result each, on their account's own stream", async () => {
    const [first, second] = accounts as [string, string];
    const virtualAccount = (account: string): JobInput => ({
      kind: "collection.virtual-account",
      account,
      idempotencyKey: `va-${account}`,
      request: { body: { amount: 1000, validFor: 30 } },
    });
    // One enqueue of both accounts' rows: the key claims and holds are split by slot.
    const jobs = [
      ...payoutBatch("shard-a", 150, first),
      ...payoutBatch("shard-b", 150, second),
      virtualAccount(first),
      virtualAccount(second),
    ];
    const enqueued = await p.producer().enqueueMany(jobs);
    const results = await p.waitForResults(jobs.length, 60_000);
    expect(results.filter((r) => r.result !== "succeeded")).toEqual([]);
    const space = keyspace(p.config().redisPrefix, true);
    for (const [account, accountId] of [
      [first, "acct_shard_first"],
      [second, "acct_shard_second"],
    ] as const) {
      // Payouts carry their key to the ledger; the keyless job is checked by its one result.
      const payouts = (list: readonly { account: string; idempotencyKey: string }[]) =>
        list.filter((x) => x.account === account && x.idempotencyKey !== `va-${account}`);
      await expectExactlyOnce(
        p.sb,
        accountId,
        payouts(enqueued) as typeof enqueued,
        payouts(results) as typeof results,
      );
      const keyless = results.filter((r) => r.idempotencyKey === `va-${account}`);
      expect(keyless).toHaveLength(1);
      expect(keyless[0]?.upstreamId).toBeTruthy();
      const entries = await p.connection().xrange(resultsStreamKey(space, account), "-", "+");
      const onStream = entries
        .filter(([, fields]) => fields[0] === "result")
        .map(([, fields]) => JSON.parse(fields[1] as string).account);
      expect(onStream).toEqual(Array(151).fill(account));
    }
  }, 90_000);

  it("the results consumer reads both accounts' streams: every result once, each account's in order", async () => {
    const streams = resultStreams(p.config().redisPrefix, accounts, true);
    const space = keyspace(p.config().redisPrefix, true);
    expect(streams).toEqual(accounts.map((a) => resultsStreamKey(space, a)));
    const written = await p.results();
    const seen: { account: string; jobId: string }[] = [];
    const done = new AbortController();
    await consumeResults(p.connection(), {
      streams,
      group: "ledger",
      consumer: "c1",
      signal: done.signal,
      handle: async ({ data }) => {
        seen.push({ account: String(data.account), jobId: String(data.jobId) });
        if (seen.length === written.length) done.abort();
      },
    });
    expect(seen.map((s) => s.jobId).sort()).toEqual(written.map((r) => r.jobId).sort());
    for (const account of accounts)
      expect(seen.filter((s) => s.account === account).map((s) => s.jobId)).toEqual(
        written.filter((r) => r.account === account).map((r) => r.jobId),
      );
  });

  it("pauses and lists both accounts, each read on its own shard", async () => {
    const [first, second] = accounts as [string, string];
    const pauses = p.workers().pauses;
    await pauses.pause(first, "cluster test");
    await pauses.pause(second, "cluster test");
    expect((await pauses.list()).map((x) => x.account).sort()).toEqual([first, second].sort());
    await pauses.resume(first);
    await pauses.resume(second);
    expect(await pauses.list()).toEqual([]);
  });

  it("answers the start's ping through any seed that answers, and reads every master's persistence", async () => {
    const seeds = p.redis.url.replace("redis+cluster://", "");
    await expect(pingRedis(`redis+cluster://127.0.0.1:1,${seeds}`)).resolves.toBeUndefined();
    await expect(pingRedis("redis+cluster://127.0.0.1:1", 500)).rejects.toThrow(/ECONNREFUSED/);

    const cluster = p.connection() as Cluster;
    expect(await checkRedisSafety(cluster)).toEqual({ safe: true, warnings: [] });
    const [master] = cluster.nodes("master");
    if (!master) throw new Error("no master");
    await master.config("SET", "maxmemory-policy", "allkeys-lru");
    try {
      const { safe, warnings } = await checkRedisSafety(cluster);
      expect(safe).toBe(false);
      expect(warnings).toEqual([
        expect.stringMatching(
          new RegExp(
            `^node ${master.options.host}:${master.options.port}: maxmemory-policy is allkeys-lru`,
          ),
        ),
      ]);
    } finally {
      await master.config("SET", "maxmemory-policy", "noeviction");
    }
  });
});
