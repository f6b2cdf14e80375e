import { migrateLegacyBatchKeys } from "../batches/legacy-batch-keys.js";
import type { Config } from "../config.js";
import { createLogger } from "../logger.js";
import { migrateLegacyPauses } from "../queues/account-pauses.js";
import { closeRedis } from "../redis/close.js";
import { createRedis, type RedisConnection } from "../redis/connection.js";
import { pingRedis } from "../redis/private-redis.js";
import { redactUrl } from "../redis/redact-url.js";
import { openParts, type SharedParts } from "../service/open-parts.js";
import { CliError } from "./cli-error.js";

/** The configured Redis, for an operator command; `close()` lets go of it. */
export async function openOperatorRedis(
  config: Config,
): Promise<{ readonly connection: RedisConnection; close(): Promise<void> }> {
  try {
    await pingRedis(config.redisUrl);
  } catch (error) {
    throw new CliError(
      `Redis does not answer at ${redactUrl(config.redisUrl)} (${(error as Error).message}): ` +
        "set REDIS_URL to the Redis of your running moneyq service",
    );
  }
  // Its commands wait through an outage: the operator sees why on stderr, never on stdout.
  const connection = createRedis(
    config.redisUrl,
    createLogger(config.logLevel, process.stderr),
    "operator",
  );
  return { connection, close: () => closeRedis(connection) };
}

/** Connects the operator commands to the configured Redis; `close()` lets go of it. */
export async function openOperator(config: Config): Promise<SharedParts> {
  const { connection } = await openOperatorRedis(config);
  await migrateLegacyBatchKeys(connection, config.redisPrefix);
  await migrateLegacyPauses(connection, config.redisPrefix);
  const parts = openParts(config, connection);
  return {
    ...parts,
    async close() {
      await parts.close().catch(() => undefined);
      await closeRedis(connection);
    },
  };
}
