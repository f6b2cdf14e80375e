// One worker process against one Redis and against a Redis Cluster (three masters, a replica
// each), with several accounts: its jobs per second, and the CPU a job costs the process and
// Redis (masters and replicas apart). Both Redis setups are this run's own redis-servers with
// the same settings (appendonly, everysec), on this machine; rounds alternate the two, so drift
// in the machine hits both alike. Run: npm run bench -- cluster (needs redis-server, redis-cli).
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { Registry } from "prom-client";
import { loadConfig } from "../src/config/load-config.js";
import { createLogger } from "../src/logger.js";
import type { JobInput } from "../src/queues/job-envelope.js";
import { Producer } from "../src/queues/producer.js";
import { createRedis } from "../src/redis/connection.js";
import { startPrivateRedis } from "../src/redis/private-redis.js";
import { startWorkers } from "../src/service/start-workers.js";
import { startLocalCluster } from "../test/helpers/redis-cluster.js";
import { body, CONCURRENCY, KEY, stub } from "./pipeline-run.js";

const ACCOUNTS = 4;
const JOBS_PER_ACCOUNT = 1000;
const ROUNDS = 3;
const SETTINGS = ["--appendonly", "yes", "--maxmemory-policy", "noeviction"];

interface Run {
  readonly perSecond: number;
  /** CPU µs a job: this process, Redis masters (or the one Redis), replicas. */
  readonly processUs: number;
  readonly mastersUs: number;
  readonly replicasUs: number;
}

/** CPU µs each node has used so far, masters and replicas apart. */
async function nodesCpu(
  nodeUrls: readonly string[],
): Promise<{ masters: number; replicas: number }> {
  const totals = { masters: 0, replicas: 0 };
  for (const url of nodeUrls) {
    const node = new Redis(url);
    try {
      const info = await node.info();
      const seconds = (field: string) => Number(new RegExp(`${field}:([\\d.]+)`).exec(info)?.[1]);
      const us = (seconds("used_cpu_user") + seconds("used_cpu_sys")) * 1e6;
      if (info.includes("role:slave")) totals.replicas += us;
      else totals.masters += us;
    } finally {
      node.disconnect();
    }
  }
  return totals;
}

async function flush(nodeUrls: readonly string[]): Promise<void> {
  for (const url of nodeUrls) {
    const node = new Redis(url);
    try {
      if (!(await node.info("replication")).includes("role:slave")) await node.flushall();
    } finally {
      node.disconnect();
    }
  }
}

/** Enqueues every account's jobs, then one worker process runs them to their last result. */
async function run(redisUrl: string, nodeUrls: readonly string[], baseUrl: string): Promise<Run> {
  const aliases = Array.from({ length: ACCOUNTS }, (_, i) => `acct${i + 1}`);
  const config = loadConfig({
    REDIS_URL: redisUrl,
    PAYMENTS_API_URL: baseUrl,
    MONEYQ_ACCOUNTS: JSON.stringify(aliases.map((alias) => ({ alias, apiKey: KEY }))),
    MONEYQ_REDIS_PREFIX: `bench-${randomUUID().slice(0, 8)}`,
    MONEYQ_LOG_LEVEL: "silent",
    MONEYQ_CONCURRENCY: String(CONCURRENCY),
    MONEYQ_RATE_LIMIT_PER_SECOND: "1000000",
  });
  const connection = createRedis(redisUrl, createLogger("warn"), "bench");
  const producer = new Producer({
    connection,
    prefix: config.redisPrefix,
    accounts: aliases,
    maxAttempts: 8,
    retentionMs: 60_000,
  });
  const inputs: JobInput[] = aliases.flatMap((account) =>
    Array.from({ length: JOBS_PER_ACCOUNT }, (_, i) => ({
      kind: "payout.bank" as const,
      account,
      batchId: "bench",
      reference: `r${i}`,
      request: { body },
    })),
  );
  await producer.enqueueMany(inputs);
  const before = await nodesCpu(nodeUrls);
  let recorded = 0;
  let allRecorded: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => {
    allRecorded = resolve;
  });
  const started = performance.now();
  const cpu = process.cpuUsage();
  const workers = await startWorkers({
    config,
    connection,
    logger: createLogger("silent"),
    registry: new Registry(),
    onResult: async () => {
      recorded += 1;
      if (recorded === inputs.length) allRecorded();
    },
  });
  await finished;
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const after = await nodesCpu(nodeUrls);
  await workers.close();
  await producer.close();
  await connection.quit();
  await flush(nodeUrls);
  const jobs = inputs.length;
  return {
    perSecond: jobs / seconds,
    processUs: (used.user + used.system) / jobs,
    mastersUs: (after.masters - before.masters) / jobs,
    replicasUs: (after.replicas - before.replicas) / jobs,
  };
}

const median = (xs: readonly number[]) =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const upstream = await stub(0);
const single = await startPrivateRedis("redis-server", SETTINGS);
const cluster = await startLocalCluster();
const setups = [
  { name: "one Redis", url: single.url, nodes: [single.url] },
  {
    name: "cluster, 3 masters + 3 replicas",
    url: cluster.url,
    nodes: cluster.nodes.map((n) => n.url),
  },
];
const runs = new Map<string, Run[]>(setups.map((s) => [s.name, []]));
try {
  // A warm-up of each, then rounds that alternate them.
  for (const setup of setups) await run(setup.url, setup.nodes, upstream.baseUrl);
  for (let round = 0; round < ROUNDS; round += 1)
    for (const setup of setups)
      runs.get(setup.name)?.push(await run(setup.url, setup.nodes, upstream.baseUrl));
} finally {
  upstream.child.kill("SIGTERM");
  await Promise.allSettled([single.stop(), cluster.stop()]);
}

const baseline = median((runs.get(setups[0]?.name as string) ?? []).map((r) => r.perSecond));
console.log(
  `one worker process, concurrency ${CONCURRENCY}, ${ACCOUNTS} accounts x ${JOBS_PER_ACCOUNT} payouts, 0 ms stub, ${ROUNDS} rounds, node ${process.version}`,
);
console.log(
  "| Redis | jobs/s: median (range) | ratio to one Redis | CPU µs a job (medians): worker process | Redis masters | Redis replicas |",
);
console.log("|---|---|---|---|---|---|");
for (const [name, list] of runs) {
  const rates = list.map((r) => r.perSecond);
  const cell = (pick: (r: Run) => number) => median(list.map(pick)).toFixed(0);
  console.log(
    `| ${name} | ${median(rates).toFixed(0)} (${Math.min(...rates).toFixed(0)}-${Math.max(...rates).toFixed(0)}) | ${(median(rates) / baseline).toFixed(3)} | ${cell((r) => r.processUs)} | ${cell((r) => r.mastersUs)} | ${cell((r) => r.replicasUs)} |`,
  );
}
process.exit(0);
