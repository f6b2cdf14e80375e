import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, inject } from "vitest";

export interface TestRedis {
  readonly url: string;
  /** Unique to the calling test file: every key the file writes starts with it. */
  readonly prefix: string;
  /** A new connection, closed after the file's tests. */
  connect(): Redis;
  /** Keys under the prefix. */
  keys(): Promise<string[]>;
  /** Deletes every key under the prefix. */
  clean(): Promise<void>;
}

/** Real Redis for one test file, under a private key prefix that is deleted afterwards. */
export function useTestRedis(label = "t"): TestRedis {
  const url = inject("redisUrl");
  const prefix = `mqtest-${label}-${randomUUID().slice(0, 8)}`;
  const opened: Redis[] = [];
  const admin = new Redis(url, { lazyConnect: true });
  opened.push(admin);

  const keys = async () => {
    const found: string[] = [];
    let cursor = "0";
    do {
      const [next, batch] = await admin.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      cursor = next;
      found.push(...batch);
    } while (cursor !== "0");
    return found;
  };
  const clean = async () => {
    const found = await keys();
    for (let i = 0; i < found.length; i += 500) await admin.del(...found.slice(i, i + 500));
  };

  afterAll(async () => {
    await clean();
    await Promise.allSettled(opened.map((c) => c.quit()));
  });

  return {
    url,
    prefix,
    connect() {
      const connection = new Redis(url, { maxRetriesPerRequest: null });
      opened.push(connection);
      return connection;
    },
    keys,
    clean,
  };
}
