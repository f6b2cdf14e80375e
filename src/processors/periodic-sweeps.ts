import type { AccountConfig } from "../config/load-config.js";
import type { Logger } from "../logger.js";
import type { PipelineMetrics } from "../metrics/pipeline-metrics.js";
import { SweepBusyError } from "./reconcile-sweep.js";
import type { Sweeper } from "./sweeper.js";

/** A periodic sweep looks back this far before the last one's end, for records that changed late. */
const OVERLAP_MS = 60 * 60_000;

/**
 * The service's reconciliation sweeps (MONEYQ_RECONCILE_EVERY): every interval, each account's
 * provider lists from an hour before the last sweep's end (the first: one interval back) to now.
 * Any number of processes run them; one sweeps an account at a time, the others pass. The
 * sweeper is the caller's to close.
 */
export class PeriodicSweeps {
  readonly #sweeper: Sweeper;
  readonly #accounts: readonly AccountConfig[];
  readonly #everyMs: number;
  readonly #metrics: PipelineMetrics;
  readonly #logger: Logger;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> = Promise.resolve();

  constructor(options: {
    readonly sweeper: Sweeper;
    readonly accounts: readonly AccountConfig[];
    readonly everyMs: number;
    readonly metrics: PipelineMetrics;
    readonly logger: Logger;
  }) {
    this.#sweeper = options.sweeper;
    this.#accounts = options.accounts;
    this.#everyMs = options.everyMs;
    this.#metrics = options.metrics;
    this.#logger = options.logger;
  }

  start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => {
      this.#running = this.#running.then(() => this.#sweepAll());
    }, this.#everyMs);
    this.#timer.unref();
  }

  /** Stops sweeping and waits for the sweep under way (the sweeper stays open). Idempotent. */
  async close(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running.catch(() => undefined);
  }

  async #sweepAll(): Promise<void> {
    for (const account of this.#accounts) {
      try {
        const last = await this.#sweeper.summary(account.alias);
        const now = Date.now();
        const since =
          last === undefined ? now - this.#everyMs : Date.parse(last.until) - OVERLAP_MS;
        const report = await this.#sweeper.sweep(account, {
          since: new Date(since).toISOString(),
          until: new Date(now).toISOString(),
        });
        if (report.items.length > 0)
          this.#logger.warn(
            { account: account.alias, drift: report.items.length, resolved: report.resolved },
            "the reconciliation sweep found moneyq's results and the provider's books apart",
          );
      } catch (error) {
        if (error instanceof SweepBusyError) continue;
        this.#metrics.sweepErrors.inc({ account: account.alias });
        this.#logger.warn(
          { account: account.alias, err: (error as Error).message },
          "the reconciliation sweep did not finish; the next one resumes it",
        );
      }
    }
  }
}
