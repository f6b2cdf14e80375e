import type { AccountConfig } from "../config/load-config.js";
import type { SweepReport } from "./reconcile-sweep.js";
import type { SweepSummary } from "./sweep-state.js";

export { SWEEP_LEASE_MS } from "./sweep-state.js";

/**
 * Sweeps of the configured accounts, over one Redis connection (the caller closes it); built by
 * the composition (service/open-sweeper.ts).
 */
export interface Sweeper {
  /** One sweep of `account` over a window (a sweep a process stopped in is resumed first). */
  sweep(
    account: AccountConfig,
    window: { since: string; until: string },
    waitForLockMs?: number,
  ): Promise<SweepReport>;
  /** The account's last finished sweep, if any. */
  summary(account: string): Promise<SweepSummary | undefined>;
  /** Closes the clients it opened. Idempotent. */
  close(): Promise<void>;
}
