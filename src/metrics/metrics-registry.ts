import { collectDefaultMetrics, Registry } from "prom-client";

/**
 * The one registry of a moneyq process: process and event-loop metrics (`moneyq_process_*`,
 * `moneyq_nodejs_*`) and a `role` label on every series, so a dashboard can tell API and
 * worker processes apart. Parts that record are handed this registry; nothing uses
 * prom-client's global one.
 */
export function createMetricsRegistry(role: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ role });
  collectDefaultMetrics({ register: registry, prefix: "moneyq_" });
  return registry;
}
