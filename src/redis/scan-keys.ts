import type { Cluster, Redis } from "ioredis";
import type { RedisConnection } from "./connection.js";

/**
 * Calls `onPage` with each page of the keys matching `pattern`, on every master of a cluster
 * (a SCAN sees only the node it runs on) or on the one Redis.
 */
export async function scanKeys(
  connection: RedisConnection,
  pattern: string,
  onPage: (keys: string[]) => Promise<void>,
): Promise<void> {
  const nodes: Redis[] = connection.isCluster
    ? (connection as Cluster).nodes("master")
    : [connection as Redis];
  for (const node of nodes) {
    let cursor = "0";
    do {
      const [next, keys] = await node.scan(cursor, "MATCH", pattern, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) await onPage(keys);
    } while (cursor !== "0");
  }
}
