import { Batches } from "../batches/batches.js";
import { type Config, DEFAULT_ACCOUNT_ALIAS } from "../config.js";
import { pingRedis } from "../embedded/private-redis.js";
import { redactUrl } from "../embedded/redact-url.js";
import { DeadLetters } from "../queues/dead-letters.js";
import { Producer } from "../queues/producer.js";
import { createRedis } from "../redis-connection.js";
import { ResultsStore } from "../results/results-store.js";
import { CliError } from "./cli-error.js";
import type { Operator } from "./operator.js";

/** Connects an operator to the configured Redis; `close()` lets go of it. */
export async function openOperator(config: Config): Promise<Operator & { close(): Promise<void> }> {
  try {
    await pingRedis(config.redisUrl);
  } catch (error) {
    throw new CliError(
      `Redis does not answer at ${redactUrl(config.redisUrl)} (${(error as Error).message}): ` +
        "set REDIS_URL to the Redis of your running moneyq service",
    );
  }
  const connection = createRedis(config.redisUrl);
  const accounts =
    config.paymentsApiUrl === undefined
      ? [DEFAULT_ACCOUNT_ALIAS]
      : config.accounts.map((a) => a.alias);
  const producer = new Producer({
    connection,
    prefix: config.redisPrefix,
    accounts,
    maxAttempts: config.pipeline.maxAttempts,
    retentionMs: config.pipeline.retentionMs,
  });
  const results = new ResultsStore(connection, {
    prefix: config.redisPrefix,
    retentionMs: config.pipeline.retentionMs,
    maxLen: config.pipeline.resultsMaxLen,
  });
  const batches = new Batches({ connection, prefix: config.redisPrefix, producer, results });
  const deadLetters = new DeadLetters(connection, config.redisPrefix, results);
  return {
    config,
    connection,
    accounts,
    producer,
    batches,
    results,
    deadLetters,
    async close() {
      await producer.close().catch(() => undefined);
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
