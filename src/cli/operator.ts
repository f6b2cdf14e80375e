import type { Redis } from "ioredis";
import type { Batches } from "../batches/batches.js";
import { type Config, loadConfig } from "../config.js";
import type { DeadLetters } from "../queues/dead-letters.js";
import type { Producer } from "../queues/producer.js";
import type { ResultsStore } from "../results/results-store.js";

/** What the operator commands act through: the service's Redis, read from configuration. */
export interface Operator {
  readonly config: Config;
  readonly connection: Redis;
  readonly accounts: readonly string[];
  readonly producer: Producer;
  readonly batches: Batches;
  readonly results: ResultsStore;
  readonly deadLetters: DeadLetters;
}

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
