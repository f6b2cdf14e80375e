import { randomUUID } from "node:crypto";
import { afterAll, inject } from "vitest";
import { createLogger } from "../../src/logger.js";
import { isClusterUrl } from "../../src/net/redis-url.js";
import { createRedis, type RedisConnection } from "../../src/redis/connection.js";
import { type Keyspace, keyspace, resultsStreamKey } from "../../src/redis/keys.js";
import { scanKeys } from "../../src/redis/scan-keys.js";

/** A single Redis's keyspace, for names that depend only on the kind of Redis (queue names). */
export const singleRedis = keyspace("");

export interface TestRedis {
  readonly url: string;
  /** Unique to the calling test file: every key the file writes starts with it. */
  readonly prefix: string;
  /** The keyspace under `prefix` (the file's own by default) on this Redis, cluster or not. */
  space(prefix?: string): Keyspace;
  /**
   * Every entry of the results streams of `accounts` under `prefix` (the file's own by default):
   * one stream on a single Redis, one per account on a cluster, each read in order.
   */
  resultEntries(accounts: readonly string[], prefix?: string): Promise<[string, string[]][]>;
  /** A new connection (to a cluster under `npm run test:cluster`), closed after the file's tests. */
  connect(): RedisConnection;
  /** Keys under the prefix. */
  keys(): Promise<string[]>;
  /** Deletes every key under the prefix. */
  clean(): Promise<void>;
}

/** Real Redis for one test file, under a private key prefix that is deleted afterwards. */
export function useTestRedis(label = "t"): TestRedis {
  const url = inject("redisUrl");
  const prefix = `mqtest-${label}-${randomUUID().slice(0, 8)}`;
  const opened: RedisConnection[] = [];
  const open = (options = {}) => createRedis(url, createLogger("silent"), "test", options);
  const admin = open({ lazyConnect: true });
  opened.push(admin);

  const keys = async () => {
    const found: string[] = [];
    await scanKeys(admin, `${prefix}*`, async (page) => {
      found.push(...page);
    });
    return found;
  };
  // One key a command: on a cluster the keys of a page lie in many slots.
  const clean = async () => {
    const found = await keys();
    for (let i = 0; i < found.length; i += 500)
      await Promise.all(found.slice(i, i + 500).map((key) => admin.del(key)));
  };

  afterAll(async () => {
    await clean();
    await Promise.allSettled(opened.map((c) => c.quit()));
  });

  return {
    url,
    prefix,
    space: (under = prefix) => keyspace(under, isClusterUrl(url)),
    async resultEntries(accounts, under = prefix) {
      const space = keyspace(under, isClusterUrl(url));
      const entries: [string, string[]][] = [];
      for (const stream of new Set(accounts.map((a) => resultsStreamKey(space, a))))
        entries.push(...(await admin.xrange(stream, "-", "+")));
      return entries;
    },
    connect() {
      const connection = open();
      opened.push(connection);
      return connection;
    },
    keys,
    clean,
  };
}
