import type { RedisConnection } from "./connection.js";
import { type Keyspace, keyspace } from "./keys.js";
import { ReplicaWaits } from "./replica-waits.js";
import { defineCatalogue } from "./scripts/catalogue.js";

/**
 * What every part on one Redis connection and key prefix shares: the connection with the
 * catalogue's scripts defined on it, the keyspace, and the replica waits (one wait a tag at a
 * time for all of them, where each part once waited on its own).
 */
export interface RedisContext {
  readonly connection: RedisConnection;
  readonly space: Keyspace;
  readonly replicas: ReplicaWaits;
}

const contexts = new WeakMap<RedisConnection, Map<string, RedisContext>>();

/**
 * The context of `connection` under `prefix`, built the first time it is asked for and the same
 * object after: the composition asks first, and each part it builds on that connection is handed
 * the same keyspace, scripts and replica waits. Parts take the connection (their options are the
 * library's public API) and look the context up by it.
 */
export function redisContext(connection: RedisConnection, prefix: string): RedisContext {
  let byPrefix = contexts.get(connection);
  if (!byPrefix) {
    byPrefix = new Map();
    contexts.set(connection, byPrefix);
  }
  let context = byPrefix.get(prefix);
  if (!context) {
    defineCatalogue(connection);
    const space = keyspace(prefix, connection.isCluster);
    context = Object.freeze({ connection, space, replicas: new ReplicaWaits(connection, space) });
    byPrefix.set(prefix, context);
  }
  return context;
}
