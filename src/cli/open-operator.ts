import { migrateLegacyBatchKeys } from "../batches/legacy-batch-keys.js";
import type { Config } from "../config/load-config.js";
import { createLogger } from "../logger.js";
import { balanceSource } from "../processors/provider-lookup.js";
import { migrateLegacyPauses } from "../queues/account-pauses.js";
import { closeRedis } from "../redis/close.js";
import { createRedis, type RedisConnection } from "../redis/connection.js";
import { pingRedis } from "../redis/private-redis.js";
import { redactUrl } from "../redis/redact-url.js";
import { openProviderLookups } from "../service/open-lookups.js";
import { openParts, type SharedParts, serviceAccounts } from "../service/open-parts.js";
import { openProviderAdapter } from "../service/provider-adapter.js";
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
  // Before connecting: an adapter that cannot be loaded is a bad setting like any other.
  const adapter =
    config.paymentsApiUrl === undefined ? undefined : await openProviderAdapter(config);
  const { connection } = await openOperatorRedis(config);
  await migrateLegacyBatchKeys(connection, config.redisPrefix);
  await migrateLegacyPauses(connection, config.redisPrefix);
  // A dry run of stable payouts reads balances at the configured provider, through the gate.
  const lookups =
    config.paymentsApiUrl === undefined
      ? undefined
      : openProviderLookups(
          config,
          connection,
          config.paymentsApiUrl,
          serviceAccounts(config),
          adapter,
        );
  const parts = openParts(config, connection, undefined, lookups && balanceSource(lookups.lookups));
  return {
    ...parts,
    async close() {
      await parts.close().catch(() => undefined);
      await lookups?.close().catch(() => undefined);
      await closeRedis(connection);
    },
  };
}
