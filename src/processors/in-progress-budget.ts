import type { Worker } from "bullmq";

/** How often, at most, the shares are worked out again as accounts start and stop working. */
const REBALANCE_MS = 200;

interface Held {
  readonly worker: Worker;
  /** The account's own concurrency: its share never exceeds it. */
  readonly concurrency: number;
  inProgress: number;
}

/**
 * Shares one process's budget of jobs in progress (config.pipeline.maxJobsInProgress) among
 * the accounts that have jobs in progress, by setting each account's worker's concurrency.
 *
 * Every job in progress waits for a slot of its account's rate, and each asks the rate gate
 * again while it waits: held by thousands of accounts at their full concurrency, the process
 * spends its CPU on asking and misses the slots it was given (measured: 1,000 busy accounts
 * at 16 each stalled a process for good). Fewer jobs held per account cost an account nothing
 * while its rate, not its concurrency, is what limits it. An account never gets less than
 * one; the accounts taking turns (account-turns.ts) bound how many are busy in a process.
 */
export class InProgressBudget {
  readonly #budget: number;
  readonly #accounts = new Map<string, Held>();
  #busy = 0;
  #timer: NodeJS.Timeout | undefined;
  #share: number | undefined;
  #closed = false;

  constructor(budget: number) {
    this.#budget = budget;
  }

  /** Puts `account`'s worker under the budget, at its current share. */
  add(account: string, worker: Worker, concurrency: number): void {
    this.#accounts.set(account, { worker, concurrency, inProgress: 0 });
    this.#share = this.#shareNow();
    worker.concurrency = Math.min(concurrency, this.#share);
  }

  /** Takes `account`'s worker out of the budget (it has closed, with nothing in progress). */
  remove(account: string): void {
    const held = this.#accounts.get(account);
    if (held === undefined) return;
    this.#accounts.delete(account);
    if (held.inProgress > 0) this.#busy -= 1;
  }

  /**
   * Whether a job `account`'s worker just fetched fits in the account's share. It may not: a
   * worker fetches up to its concurrency, and other accounts becoming busy meanwhile shrink
   * the share. A job that does not fit goes back to wait before it asks for a slot, so a wave
   * of accounts starting at once sheds what it took too much instead of holding it.
   */
  admits(account: string): boolean {
    const held = this.#accounts.get(account);
    if (held === undefined || held.inProgress === 0) return true;
    return held.inProgress < Math.min(held.concurrency, this.#shareNow());
  }

  /** Around each run of one of `account`'s jobs. */
  async run<T>(account: string, work: () => Promise<T>): Promise<T> {
    this.#change(account, 1);
    try {
      return await work();
    } finally {
      this.#change(account, -1);
    }
  }

  /** Stops the pending rework of the shares (the workers are closing). */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #change(account: string, by: 1 | -1): void {
    const held = this.#accounts.get(account);
    if (held === undefined) return;
    const was = held.inProgress;
    held.inProgress += by;
    if ((was === 0) === (held.inProgress === 0)) return;
    this.#busy += by;
    if (this.#closed) return;
    // A newly busy account's share can only shrink the others': rework at once when it
    // does, so the process never holds more than the budget for long; growth can wait.
    if (by === 1 && this.#shareNow() < (this.#share ?? Number.POSITIVE_INFINITY)) {
      this.#apply(this.#shareNow());
      return;
    }
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.#apply(this.#shareNow());
    }, REBALANCE_MS).unref();
  }

  #shareNow(): number {
    return Math.max(1, Math.floor(this.#budget / Math.max(1, this.#busy)));
  }

  #apply(share: number): void {
    if (share === this.#share) return;
    this.#share = share;
    for (const held of this.#accounts.values())
      held.worker.concurrency = Math.min(held.concurrency, share);
  }
}
