import { PaymentsClient } from "../client/payments-client.js";
import type { AccountConfig, Config } from "../config/load-config.js";
import { ProviderLookups } from "../processors/provider-lookup.js";
import { RateGate } from "../processors/rate-gate.js";
import type { ProviderAdapter } from "../provider/adapter.js";
import type { RedisConnection } from "../redis/connection.js";

/** Lookups of the configured accounts, with clients of their own (closed by `close`). */
export function openProviderLookups(
  config: Config,
  connection: RedisConnection,
  baseUrl: string,
  accounts: readonly AccountConfig[],
  adapter: ProviderAdapter | undefined,
): { readonly lookups: ProviderLookups; close(): Promise<void> } {
  const clients = new Map(
    accounts.map((a) => [
      a.alias,
      new PaymentsClient({
        baseUrl,
        apiKey: a.apiKey,
        profile: config.provider,
        adapter,
        connections: 2,
        connectTimeoutMs: config.http.connectTimeoutMs,
        requestTimeoutMs: config.http.requestTimeoutMs,
      }),
    ]),
  );
  const gate = new RateGate(connection, config.redisPrefix, config.pipeline.rateWindowMarginMs);
  const lookups = new ProviderLookups({
    clients,
    accounts,
    gate,
    toleranceMs: config.pipeline.rateWindowMarginMs / 2,
  });
  return {
    lookups,
    async close() {
      await Promise.allSettled([...clients.values()].map((c) => c.close()));
    },
  };
}
