import type { Cluster, Redis } from "ioredis";
import type { Logger } from "../logger.js";

/** How often a lasting outage is logged again. */
const REPEAT_MS = 30_000;

/** Errors that say the connection to Redis is down, not that a command was wrong. */
const CONNECTION_ERROR =
  /ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN|Connection is closed/;

export function isRedisConnectionError(error: Error): boolean {
  return CONNECTION_ERROR.test(error.message);
}

export interface OutageLog {
  /** Counts a failure; logs the first of an outage, then at most once per REPEAT_MS. */
  failed(error: Error): void;
  /** Logs the recovery, once, after failures. */
  restored(): void;
}

/** One line per outage rather than one per reconnect attempt (several a second). */
export function outageLog(logger: Logger, name: string): OutageLog {
  let failures = 0;
  let loggedAt = 0;
  return {
    failed(error) {
      failures += 1;
      const now = Date.now();
      if (now - loggedAt < REPEAT_MS) return;
      loggedAt = now;
      logger.warn(
        { redis: name, err: error.message, failures },
        "Redis connection failed; reconnecting",
      );
    },
    restored() {
      if (failures === 0) return;
      logger.info({ redis: name, failures }, "Redis connection restored");
      failures = 0;
      loggedAt = 0;
    },
  };
}

/**
 * Gives a connection its error listener: without one, ioredis reports every failed reconnect
 * as an "Unhandled error event" on stderr. The outage is logged through outageLog. (The
 * bound is RedisConnection written out: connection.ts imports this file.)
 */
export function watchRedisErrors<C extends Redis | Cluster>(
  connection: C,
  logger: Logger,
  name: string,
): C {
  const outage = outageLog(logger, name);
  connection.on("error", (error: Error) => outage.failed(error));
  connection.on("ready", () => outage.restored());
  return connection;
}
