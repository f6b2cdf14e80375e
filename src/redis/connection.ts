import { Redis, type RedisOptions } from "ioredis";
import type { Logger } from "../logger.js";
import { watchRedisErrors } from "./errors.js";

/**
 * A connection for queues and workers. BullMQ needs `maxRetriesPerRequest: null` so that a
 * blocking command survives a reconnect; commands wait for the connection instead of failing,
 * so an outage is logged (one line per outage, under `name`) rather than silent. A duplicate()
 * needs its own watchRedisErrors.
 */
export function createRedis(
  url: string,
  logger: Logger,
  name: string,
  options: RedisOptions = {},
): Redis {
  const connection = new Redis(url, {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    ...options,
  });
  return watchRedisErrors(connection, logger, name);
}
