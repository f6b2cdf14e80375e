import { Redis, type RedisOptions } from "ioredis";

/**
 * A connection for queues and workers. BullMQ needs `maxRetriesPerRequest: null` so that a
 * blocking command survives a reconnect; commands wait for the connection instead of failing.
 */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, ...options });
}
