import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { type PrivateRedis, startPrivateRedis } from "../../src/redis/private-redis.js";

const run = promisify(execFile);

export interface LocalCluster {
  /** REDIS_URL of the cluster: `redis+cluster://` and every node. */
  readonly url: string;
  readonly nodes: readonly PrivateRedis[];
  /** Stops every node and removes their directories. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * A real Redis Cluster from the machine's redis-server: `masters` masters with `replicas`
 * replicas each, on free loopback ports in temporary directories, joined by
 * `redis-cli --cluster create`. Ready when every node says `cluster_state:ok` and every replica's
 * link to its master is up.
 */
export async function startLocalCluster(masters = 3, replicas = 1): Promise<LocalCluster> {
  const settings = [
    "--cluster-enabled",
    "yes",
    "--cluster-config-file",
    "nodes.conf",
    // A failed master is replaced within seconds (the default is 15 s).
    "--cluster-node-timeout",
    "2000",
    "--appendonly",
    "yes",
    "--maxmemory-policy",
    "noeviction",
  ];
  const started = await Promise.allSettled(
    Array.from({ length: masters * (1 + replicas) }, () => startNode(settings)),
  );
  const nodes = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const refused = started.find((s) => s.status === "rejected");
  if (refused) {
    await Promise.allSettled(nodes.map((n) => n.stop()));
    throw refused.reason;
  }
  const stop = async () => {
    await Promise.allSettled(nodes.map((n) => n.stop()));
  };
  try {
    const addresses = nodes.map((n) => n.url.replace("redis://", ""));
    await run("redis-cli", [
      "--cluster",
      "create",
      ...addresses,
      "--cluster-replicas",
      String(replicas),
      "--cluster-yes",
    ]);
    await Promise.all(nodes.map((n) => waitForClusterOk(n.url)));
    return { url: `redis+cluster://${addresses.join(",")}`, nodes, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** How many free ports a node is tried on before its cluster start fails. */
const NODE_TRIES = 10;

/**
 * A cluster node on a free port. A node's cluster bus listens 10,000 ports higher, so
 * redis-server refuses a port above 55,535 (exit 1), and the bus port may be taken: such a
 * node is started again on another free port.
 */
async function startNode(settings: readonly string[]): Promise<PrivateRedis> {
  for (let tries = 1; ; tries += 1) {
    try {
      return await startPrivateRedis("redis-server", settings);
    } catch (error) {
      if (tries >= NODE_TRIES) throw error;
    }
  }
}

async function waitForClusterOk(url: string): Promise<void> {
  const client = new Redis(url, { lazyConnect: true });
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const info = await client.cluster("INFO");
      // A replica counts once its link to its master is up: until then WAIT cannot count it.
      const replication = await client.info("replication");
      const linked =
        !replication.includes("role:slave") || replication.includes("master_link_status:up");
      if (String(info).includes("cluster_state:ok") && linked) return;
      if (Date.now() > deadline) throw new Error(`cluster not ok at ${url}: ${info}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    client.disconnect();
  }
}
