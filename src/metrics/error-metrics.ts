import { Counter, type Registry } from "prom-client";
import type { ErrorCount } from "../redis/repeated-errors.js";

const NAME = "moneyq_errors_total";

/**
 * Counts every error a process logged or folded into a repeat line (redis/repeated-errors.ts),
 * by source and code (a Redis trouble code, or `other`): the log says an error ran on, the
 * metric says how often. One counter per registry, however many parts count into it.
 */
export function countErrors(registry: Registry): (count: ErrorCount) => void {
  const counter =
    (registry.getSingleMetric(NAME) as Counter<"source" | "code"> | undefined) ??
    new Counter({
      name: NAME,
      help: "Errors by source (worker, webhook worker, webhook relay, api) and code (a Redis trouble code such as redis_out_of_memory, or other); a run of the same error is logged once per interval, and counted here every time.",
      labelNames: ["source", "code"],
      registers: [registry],
    });
  return ({ source, code }) => counter.inc({ source, code });
}
