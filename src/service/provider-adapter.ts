import { type Config, ConfigError } from "../config/load-config.js";
import type { ProviderAdapter } from "../provider/adapter.js";
import { AdapterLoadError, loadProviderAdapter } from "../provider/load-adapter.js";

/**
 * The adapter module MONEYQ_PROVIDER_ADAPTER names, imported before anything connects: one that
 * cannot be loaded refuses start as any bad setting does, naming the variable and the rule.
 */
export async function openProviderAdapter(config: Config): Promise<ProviderAdapter | undefined> {
  if (config.providerAdapter === undefined) return undefined;
  try {
    return await loadProviderAdapter(config.providerAdapter);
  } catch (error) {
    if (!(error instanceof AdapterLoadError)) throw error;
    throw new ConfigError([{ variable: "MONEYQ_PROVIDER_ADAPTER", rule: error.rule }]);
  }
}
