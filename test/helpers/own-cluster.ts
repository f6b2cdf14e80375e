import { randomUUID } from "node:crypto";
import type { Cluster } from "ioredis";
import { Redis } from "ioredis";
import { Registry } from "prom-client";
import { afterAll, beforeAll } from "vitest";
import { type Config, loadConfig } from "../../src/config/load-config.js";
import { createLogger } from "../../src/logger.js";
import type { Producer } from "../../src/queues/producer.js";
import { createRedis } from "../../src/redis/connection.js";
import { keyspace, resultsStreamKey } from "../../src/redis/keys.js";
import { JobResult } from "../../src/results/job-result.js";
import { type RunningWorkers, startWorkers } from "../../src/service/start-workers.js";
import { producerFor } from "./pipeline.js";
import { type LocalCluster, startLocalCluster } from "./redis-cluster.js";
import { type TestSandbox, useSandbox } from "./sandbox.js";

export interface OwnCluster {
  readonly sb: TestSandbox;
  cluster(): LocalCluster;
  config(): Config;
  connection(): Cluster;
  producer(): Producer;
  workers(): RunningWorkers;
  /** Every result on the account's stream, read whole (an entry a failover lost is not there). */
  results(account?: string): Promise<JobResult[]>;
  /** `host:port` of the master serving the account's slot, and of its replicas, as the cluster says now. */
  shardOf(account?: string): Promise<{ master: string; replicas: string[] }>;
}

/**
 * A Redis Cluster of the test file's own (three masters, a replica each), a sandbox, and
 * moneyq's producer and workers on them, for tests that kill or stop Redis nodes: the shared
 * cluster of `npm run test:cluster` stays whole for the other suites.
 */
export function useOwnCluster(env: Record<string, string> = {}): OwnCluster {
  const sb = useSandbox({ settleDelayMs: 20 });
  let cluster: LocalCluster | undefined;
  let config: Config | undefined;
  let connection: Cluster | undefined;
  let producer: Producer | undefined;
  let workers: RunningWorkers | undefined;
  const got = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the cluster's pipeline has not started");
    return value;
  };

  beforeAll(async () => {
    cluster = await startLocalCluster();
    config = loadConfig({
      REDIS_URL: cluster.url,
      PAYMENTS_API_URL: sb.sandbox.baseUrl,
      PAYMENTS_API_KEY: sb.sandbox.apiKey,
      MONEYQ_REDIS_PREFIX: `mqown-${randomUUID().slice(0, 8)}`,
      MONEYQ_LOG_LEVEL: "silent",
      MONEYQ_CONCURRENCY: "32",
      ...env,
    });
    connection = createRedis(config.redisUrl, createLogger("silent"), "test") as Cluster;
    producer = producerFor(config, connection);
    workers = await startWorkers({
      config,
      connection,
      logger: createLogger("silent"),
      registry: new Registry(),
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled([workers?.close(), producer?.close()]);
    await connection?.quit().catch(() => undefined);
    await cluster?.stop();
  });

  return {
    sb,
    cluster: () => got(cluster),
    config: () => got(config),
    connection: () => got(connection),
    producer: () => got(producer),
    workers: () => got(workers),
    async results(account = "default") {
      const stream = resultsStreamKey(keyspace(got(config).redisPrefix, true), account);
      return (await got(connection).xrange(stream, "-", "+"))
        .filter(([, fields]) => fields[0] === "result")
        .map(([, fields]) => JobResult.parse(JSON.parse(fields[1] as string)));
    },
    async shardOf(account = "default") {
      const c = got(connection);
      const slot = Number(await c.cluster("KEYSLOT", `{${account}}`));
      const range = (await c.cluster("SLOTS")).find(([from, to]) => slot >= from && slot <= to);
      const node = range?.[2];
      if (!node) throw new Error(`no master serves slot ${slot}`);
      const master = `${node[0]}:${node[1]}`;
      // Its replicas as the master itself counts them: CLUSTER SLOTS leaves out some (a replica
      // whose offset the others have not heard yet).
      const client = nodeClient(master);
      try {
        const info = await client.info("replication");
        const replicas = [...info.matchAll(/slave\d+:ip=([^,]+),port=(\d+)/g)].map(
          ([, host, port]) => `${host}:${port}`,
        );
        return { master, replicas };
      } finally {
        client.disconnect();
      }
    },
  };
}

/** The process id of the redis-server at `address` (asked while it still answers). */
export async function nodePid(address: string): Promise<number> {
  const node = nodeClient(address);
  try {
    return Number(/process_id:(\d+)/.exec(await node.info("server"))?.[1]);
  } finally {
    node.disconnect();
  }
}

/** One node, asked once: a node that is down fails the call instead of being retried. */
function nodeClient(address: string): Redis {
  const client = new Redis(`redis://${address}`, {
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on("error", () => undefined);
  return client;
}
