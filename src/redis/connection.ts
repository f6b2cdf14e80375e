import { Cluster, Redis, type RedisOptions } from "ioredis";
import type { Logger } from "../logger.js";
import { clusterTargetOf, isClusterUrl } from "../net/redis-url.js";
import { watchRedisErrors } from "./errors.js";

/** A connection to one Redis or to a Redis Cluster: every part of moneyq takes either. */
export type RedisConnection = Redis | Cluster;

/**
 * Options for each node's connection. moneyq keeps ioredis's default reply shapes
 * (`replyMapping: "legacy"`, the same as RESP2's), so it is not offered here.
 */
export type NodeOptions = Omit<RedisOptions, "replyMapping">;

/** How long to wait before the `attempt`th reconnection: 50 ms more each time, 2 s at most. */
export function reconnectDelayMs(attempt: number): number {
  return Math.min(attempt * 50, 2_000);
}

/**
 * A second connection like `connection` (same target and options), for blocking reads. Two
 * branches because ioredis's typings make `duplicate()` uncallable on the union.
 */
export function duplicateConnection(connection: RedisConnection): RedisConnection {
  return connection instanceof Cluster ? connection.duplicate() : connection.duplicate();
}

/**
 * A connection for queues and workers, to the Redis or the Redis Cluster `url` names
 * (src/net/redis-url.ts). BullMQ needs `maxRetriesPerRequest: null` so that a blocking
 * command survives a reconnect; commands wait for the connection instead of failing, so an
 * outage is logged (one line per outage, under `name`) rather than silent. A duplicate() needs
 * its own watchRedisErrors.
 */
export function createRedis(
  url: string,
  logger: Logger,
  name: string,
  options: NodeOptions = {},
): RedisConnection {
  const nodeOptions: NodeOptions = {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    // Back within 2 s of Redis's return, as before ioredis 6 (whose default backs off to 5 s
    // and more): a worker waits no longer than needed after an outage.
    retryStrategy: reconnectDelayMs,
    ...options,
  };
  if (!isClusterUrl(url)) return watchRedisErrors(new Redis(url, nodeOptions), logger, name);
  const target = clusterTargetOf(url);
  const cluster = new Cluster(
    target.nodes.map((node) => ({ ...node })),
    {
      redisOptions: {
        ...nodeOptions,
        ...(target.username !== undefined && { username: target.username }),
        ...(target.password !== undefined && { password: target.password }),
        ...(target.tls && { tls: {} }),
      },
      // A command sent while a master fails over is retried on its replica once promoted
      // (the cluster's node timeout, 15 s by default) instead of failing after 16 redirections.
      retryDelayOnFailover: 300,
      retryDelayOnClusterDown: 300,
      maxRedirections: 100,
      enableReadyCheck: true,
    },
  );
  return watchRedisErrors(cluster, logger, name);
}
