import { loadConfig } from "../config/load-config.js";
import type { SharedParts } from "../service/open-parts.js";

/** What the operator commands act through: the service's Redis, read from configuration. */
export type Operator = Omit<SharedParts, "close">;

/** Opens the configured Redis (it must answer: these commands act on a running service's jobs). */
export async function withOperator<T>(use: (operator: Operator) => Promise<T>): Promise<T> {
  const config = loadConfig();
  // Loaded only when a command acts: `--help` and usage errors start without Redis and BullMQ.
  const { openOperator } = await import("./open-operator.js");
  const operator = await openOperator(config);
  try {
    return await use(operator);
  } finally {
    await operator.close();
  }
}
