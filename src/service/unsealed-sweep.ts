import type { Batches } from "../batches/batches.js";
import type { Logger } from "../logger.js";
import type { RepeatedErrors } from "../redis/repeated-errors.js";

/** How often a process looks for abandoned submissions: a batch is cancelled this soon after its `sealBy`. */
export const UNSEALED_SWEEP_MS = 5_000;

/** A process's sweep of unsealed batches; `close` stops it and waits for a pass under way. */
export interface UnsealedSweep {
  close(): Promise<void>;
}

/**
 * Every `intervalMs`, cancels and clears the batches of `accounts` whose submission was
 * abandoned (Batches.sweepUnsealed). Every process runs one, so a batch is cleared while any
 * process runs; they take turns through the batch's lease. A pass that fails (Redis in
 * trouble) is logged, and the next one tries again.
 */
export function sweepUnsealedBatches(
  batches: Batches,
  accounts: readonly string[],
  log: { readonly logger: Logger; readonly errors: RepeatedErrors },
  intervalMs = UNSEALED_SWEEP_MS,
): UnsealedSweep {
  let pass: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    pass = pass.then(async () => {
      try {
        const cleared = await batches.sweepUnsealed(accounts);
        if (cleared > 0)
          log.logger.warn(
            { batches: cleared },
            "batches whose submission stopped and was not resumed were cancelled",
          );
      } catch (error) {
        log.errors.report("batch sweep", "sweep of unsealed batches failed", error as Error);
      }
    });
  }, intervalMs);
  timer.unref();
  return {
    async close() {
      clearInterval(timer);
      await pass;
    },
  };
}
