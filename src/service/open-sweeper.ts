import { PaymentsClient } from "../client/payments-client.js";
import type { AccountConfig, Config } from "../config/load-config.js";
import { RateGate } from "../processors/rate-gate.js";
import { type SweepDeps, sweepAccount } from "../processors/reconcile-sweep.js";
import { SweepState } from "../processors/sweep-state.js";
import type { Sweeper } from "../processors/sweeper.js";
import type { ProviderAdapter } from "../provider/adapter.js";
import { accountQueueName } from "../queues/queue-names.js";
import { bullKeys } from "../redis/bullmq-internals.js";
import type { RedisConnection } from "../redis/connection.js";
import { redisContext } from "../redis/redis-context.js";
import { Resolutions } from "../results/resolutions.js";
import { ResultsStore } from "../results/results-store.js";
import { Reversals } from "../results/reversals.js";

/**
 * What a sweep needs, built from the configuration: the accounts' rate gate, results,
 * reversals and resolutions on `connection`, and a client per account (the profile and adapter
 * the pipeline reads with). Used by `moneyq reconcile` and the service's periodic sweeps.
 */
export function openSweeper(
  config: Config,
  connection: RedisConnection,
  baseUrl: string,
  adapter: ProviderAdapter | undefined,
): Sweeper {
  const { space } = redisContext(connection, config.redisPrefix);
  const stores = {
    prefix: config.redisPrefix,
    retentionMs: config.pipeline.retentionMs,
    maxLen: config.pipeline.resultsMaxLen,
  };
  const results = new ResultsStore(connection, stores);
  const deps: SweepDeps = {
    connection,
    space,
    gate: new RateGate(connection, config.redisPrefix, config.pipeline.rateWindowMarginMs),
    results,
    reversals: new Reversals(connection, stores),
    resolutions: new Resolutions(connection, stores),
    announce: (item) => results.appendEvent(item.account, "reconciliation.drift", { ...item }),
    toleranceMs: config.pipeline.rateWindowMarginMs / 2,
  };
  const clients = new Map<string, PaymentsClient>();
  const clientOf = (account: AccountConfig) => {
    let client = clients.get(account.alias);
    if (client === undefined) {
      client = new PaymentsClient({
        baseUrl,
        apiKey: account.apiKey,
        profile: config.provider,
        adapter,
        connectTimeoutMs: config.http.connectTimeoutMs,
        requestTimeoutMs: config.http.requestTimeoutMs,
      });
      clients.set(account.alias, client);
    }
    return client;
  };
  let closed: Promise<void> | undefined;
  return {
    sweep: (account, window, waitForLockMs = 0) => {
      const queueKey = bullKeys.queue(config.redisPrefix, accountQueueName(space, account.alias));
      return sweepAccount(deps, account, clientOf(account), window, { queueKey, waitForLockMs });
    },
    summary: (account) => new SweepState(connection, space, account).summary(),
    close() {
      closed ??= Promise.allSettled([...clients.values()].map((c) => c.close())).then(
        () => undefined,
      );
      return closed;
    },
  };
}
