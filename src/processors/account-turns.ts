import type { Worker } from "bullmq";
import { WorkDue } from "../queues/work-due.js";
import { markedAt, workDueAt } from "../redis/bullmq-internals.js";
import type { RedisConnection } from "../redis/connection.js";
import { turnKeys } from "../redis/keys.js";
import type { RepeatedErrors } from "../redis/repeated-errors.js";
import { defineCatalogue } from "../redis/scripts/catalogue.js";

/** How often turns are taken, let go and handed over. */
const TICK_MS = 500;
/**
 * How long a turn is held without renewal, at most: a dead process's accounts are served again
 * after it. Shorter with a shorter job lock (turnLeaseMs).
 */
const MAX_TURN_LEASE_MS = 15_000;
/** How long a turn is held without renewal, at least: four looks for turns. */
const MIN_TURN_LEASE_MS = 4 * TICK_MS;
/** An account with nothing in progress this long, and nothing due sooner, gives up its turn... */
const IDLE_MS = 5_000;
/** ...or this long while other accounts wait for a turn. */
const IDLE_WHILE_OTHERS_WAIT_MS = 500;
/** While other accounts wait, an account holding its turn longer than this hands it over. */
const TURN_MS = 30_000;
/** Due accounts the claim looks through at most, served or not. */
const CLAIM_SCAN = 2_000;
/** Each idle account's queue is read once per this many ms per configured account... */
const POLL_MS_PER_ACCOUNT = 60;
/** ...but no more often than every second, and at least every minute. */
const POLL_BOUNDS_MS = [1_000, 60_000] as const;
/** Idle accounts read side by side. */
const POLL_CHUNK = 200;
/**
 * Every this many polls (and the first, until it succeeds) reads idle accounts' jobs rather
 * than their markers: a worker that stopped outside this process (an earlier release's, in a
 * rolling deploy) may have taken the markers of jobs it never ran.
 */
const FULL_POLL_EVERY = 10;
/** An account this process is not configured for, taken by mistake, is due again this much later. */
const NOT_MINE_BACKOFF_MS = 5_000;
/** How long closing waits for a look for turns under way (one held up by a Redis away). */
const STOP_WAIT_MS = 2_000;

interface Turn {
  readonly worker: Worker;
  readonly since: number;
  inProgress: number;
  lastActive: number;
  /** Set while the turn is being given up. */
  leaving?: Promise<void>;
}

export interface AccountTurnsOptions {
  readonly connection: RedisConnection;
  readonly prefix: string;
  /** This process's accounts, and each one's BullMQ queue key. */
  readonly queueKeys: ReadonlyMap<string, string>;
  /** How many accounts this process serves at once (MONEYQ_MAX_ACTIVE_ACCOUNTS). */
  readonly maxActive: number;
  /** BullMQ's lock on an active job (MONEYQ_LOCK_DURATION_MS); the turn's lease follows it. */
  readonly lockDurationMs: number;
  /** Starts the account's worker. */
  readonly open: (account: string) => Worker;
  /** After the account's worker has closed. */
  readonly closed: (account: string) => void;
  readonly errors: RepeatedErrors;
}

/**
 * A turn's lease: no longer than the job lock, so that a dead process's accounts are served
 * again no later than its jobs are taken back (a lease lapsing under a process that is only
 * slow costs nothing but a second worker on the account: the queue, its locks and the rate
 * gate are shared); within MIN_TURN_LEASE_MS and MAX_TURN_LEASE_MS.
 */
export function turnLeaseMs(lockDurationMs: number): number {
  return Math.min(MAX_TURN_LEASE_MS, Math.max(MIN_TURN_LEASE_MS, lockDurationMs));
}

/**
 * Runs a worker only for the accounts that have work, at most `maxActive` at once per process,
 * each held under a lease in Redis so that processes share the accounts out (docs/scaling.md).
 *
 * Whoever gives an account work rings (queues/work-due.ts); a process with room takes the turns
 * of the accounts due longest, runs their workers, renews their leases, and gives a turn up
 * once the account has nothing in progress and nothing due soon (ringing again for its next
 * delayed job). A process that dies stops renewing: its accounts are due again once their
 * leases end. While accounts wait for a turn, one held longer than TURN_MS is handed over, so
 * an account with a long backlog does not keep the others out. Idle accounts cost one read of
 * their queue per poll, which catches work that was never rung for.
 */
export class AccountTurns {
  readonly #options: AccountTurnsOptions;
  readonly #keys: { readonly due: string; readonly held: string; readonly rung: string };
  readonly #due: WorkDue;
  readonly #turns = new Map<string, Turn>();
  readonly #workers = new Map<string, Worker>();
  readonly #pollMs: number;
  readonly #leaseMs: number;
  #timer: NodeJS.Timeout | undefined;
  #ticking: Promise<void> = Promise.resolve();
  #inFlight = false;
  #again = false;
  #renewedAt = 0;
  #polledAt = 0;
  #polls = 0;
  /** Due accounts nobody served, at the last claim. */
  #waiting = 0;
  #stopped = false;

  constructor(options: AccountTurnsOptions) {
    this.#options = options;
    this.#keys = turnKeys(options.prefix);
    this.#due = new WorkDue(options.connection, options.prefix);
    const perAccount = options.queueKeys.size * POLL_MS_PER_ACCOUNT;
    this.#pollMs = Math.min(POLL_BOUNDS_MS[1], Math.max(POLL_BOUNDS_MS[0], perAccount));
    this.#leaseMs = turnLeaseMs(options.lockDurationMs);
    defineCatalogue(options.connection);
  }

  /** Accounts with work that no process served, at the last claim. */
  waiting(): number {
    return this.#waiting;
  }

  /** Accounts this process runs a worker for now. */
  served(): number {
    return this.#workers.size;
  }

  /** Taking turns, and every worker of a turn not being given up is running. */
  isRunning(): boolean {
    if (this.#timer === undefined || this.#stopped) return false;
    return [...this.#turns.values()].every((t) => t.leaving !== undefined || t.worker.isRunning());
  }

  /** The workers running now, by account (a live view). */
  get workers(): ReadonlyMap<string, Worker> {
    return this.#workers;
  }

  start(): void {
    if (this.#timer !== undefined || this.#stopped) return;
    this.#timer = setInterval(() => this.#look(), TICK_MS);
    this.#look();
  }

  /** Looks for turns now (an account was rung for work due now). */
  wake(): void {
    if (this.#timer !== undefined) this.#look();
  }

  /** Around each run of one of `account`'s jobs: a turn with a job in progress is not idle. */
  async around<T>(account: string, work: () => Promise<T>): Promise<T> {
    const turn = this.#turns.get(account);
    if (turn) turn.inProgress += 1;
    try {
      return await work();
    } finally {
      if (turn) {
        turn.inProgress -= 1;
        turn.lastActive = Date.now();
      }
    }
  }

  /**
   * Takes no more turns. Idempotent. A look under way is waited for, but not for long: with
   * Redis away it would hold the shutdown. The workers are closed by the caller, then `release`.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
    await Promise.race([
      this.#ticking,
      new Promise((resolve) => setTimeout(resolve, STOP_WAIT_MS).unref()),
    ]);
  }

  /** Gives up every turn, ringing for each account's work left. Once the workers have closed. */
  async release(): Promise<void> {
    await Promise.allSettled([...this.#turns.values()].map((t) => t.leaving));
    await Promise.allSettled([...this.#turns.keys()].map((account) => this.#giveUp(account)));
  }

  /** One look for turns at a time: one asked for meanwhile runs after it, once. */
  #look(): void {
    if (this.#stopped) return;
    if (this.#inFlight) {
      this.#again = true;
      return;
    }
    this.#inFlight = true;
    this.#ticking = this.#tick().finally(() => {
      this.#inFlight = false;
      if (this.#again) {
        this.#again = false;
        this.#look();
      }
    });
  }

  async #tick(): Promise<void> {
    try {
      const now = Date.now();
      this.#letIdleGo(now);
      // Renewed three times a lease, as BullMQ renews a job's lock twice a lock duration.
      if (now - this.#renewedAt >= this.#leaseMs / 3) await this.#renew(now);
      await this.#claim(now);
      if (now - this.#polledAt >= this.#pollMs) await this.#poll(now);
    } catch (error) {
      this.#options.errors.report("turns", "account turns not taken", error as Error);
    }
  }

  /** Accounts with nothing in progress for IDLE_MS: given up unless work is due soon. */
  #letIdleGo(now: number): void {
    const idleMs = this.#waiting > 0 ? IDLE_WHILE_OTHERS_WAIT_MS : IDLE_MS;
    for (const [account, turn] of this.#turns) {
      // A worker whose loop ended (an error it could not get past) gives its turn up: the
      // account is rung for its work and a new worker takes it.
      if (!turn.leaving && !turn.worker.isRunning()) this.#leave(account, turn);
      if (turn.leaving || turn.inProgress > 0 || now - turn.lastActive < idleMs) continue;
      turn.lastActive = now;
      const queueKey = this.#options.queueKeys.get(account) as string;
      workDueAt(this.#options.connection, queueKey, now).then(
        (at) => {
          if (at === undefined || at - now > IDLE_MS) this.#leave(account, turn);
        },
        (error: Error) => this.#options.errors.report("turns", "idle check failed", error),
      );
    }
  }

  /** Closes the account's worker, then gives up its turn (`back`: to the back of the line). */
  #leave(account: string, turn: Turn, back = false): void {
    if (turn.leaving || this.#stopped) return;
    turn.leaving = turn.worker
      .close()
      .catch(() => undefined)
      .then(() => {
        this.#workers.delete(account);
        this.#options.closed(account);
        return this.#giveUp(account, back);
      })
      .catch((error: Error) => this.#options.errors.report("turns", "turn not given up", error));
  }

  /**
   * Ends the account's turn and rings for its work left, if any. No longer renewed from the
   * start, so a lease this fails to end lapses by itself; work it fails to read is rung for
   * now (whoever takes the turn finds out).
   */
  async #giveUp(account: string, back = false): Promise<void> {
    this.#turns.delete(account);
    const now = Date.now();
    const queueKey = this.#options.queueKeys.get(account) as string;
    const at = await workDueAt(this.#options.connection, queueKey, now).catch(() => now);
    await this.#release(account, at, now, back);
  }

  async #release(account: string, at: number | undefined, now: number, back: boolean) {
    const { due, held, rung } = this.#keys;
    await (this.#options.connection as unknown as TurnScripts).moneyqReleaseTurn(
      due,
      held,
      rung,
      account,
      at === undefined ? "" : String(at),
      String(now),
      back ? "1" : "0",
    );
  }

  async #renew(now: number): Promise<void> {
    const held = [...this.#turns.keys()];
    for (let i = 0; i < held.length; i += 500) {
      const args = held.slice(i, i + 500).flatMap((a) => [now + this.#leaseMs, a]);
      await this.#options.connection.zadd(this.#keys.held, "GT", ...args);
    }
    this.#renewedAt = now;
  }

  /** Takes the turns there is room for; while accounts wait and there is none, hands one over. */
  async #claim(now: number): Promise<void> {
    const room = Math.max(0, this.#options.maxActive - this.#turns.size);
    const { due, held, rung } = this.#keys;
    const answer = (await (this.#options.connection as unknown as TurnScripts).moneyqClaimTurns(
      due,
      held,
      rung,
      now,
      now + this.#leaseMs,
      room,
      CLAIM_SCAN,
    )) as [number, ...string[]];
    const [waiting, ...taken] = answer;
    this.#waiting = Number(waiting);
    for (const account of taken) this.#take(account, now);
    if (this.#waiting > 0 && room === 0) this.#handOver(now);
  }

  #take(account: string, now: number): void {
    if (this.#turns.has(account)) return; // its lease had lapsed: held again, renewed with the rest
    if (this.#stopped || !this.#options.queueKeys.has(account)) {
      // Closing, or not this process's account (processes configured apart): back in line,
      // a little later, for a process that serves it.
      const at = this.#stopped ? now : now + NOT_MINE_BACKOFF_MS;
      this.#release(account, at, now, false).catch((error: Error) =>
        this.#options.errors.report("turns", "turn not handed back", error),
      );
      return;
    }
    const worker = this.#options.open(account);
    this.#turns.set(account, { worker, since: now, inProgress: 0, lastActive: now });
    this.#workers.set(account, worker);
  }

  /** The turn held longest, if held past TURN_MS, goes to the back of the line. */
  #handOver(now: number): void {
    let longest: [string, Turn] | undefined;
    for (const entry of this.#turns)
      if (!entry[1].leaving && (!longest || entry[1].since < longest[1].since)) longest = entry;
    if (longest && now - longest[1].since >= TURN_MS) this.#leave(longest[0], longest[1], true);
  }

  /**
   * Rings for the idle accounts whose queues say they have work (work nobody rang for): their
   * markers, one command an account, or every FULL_POLL_EVERY polls their jobs. Counted done
   * only once every account was read, so a poll that fails is tried again at the next look.
   */
  async #poll(now: number): Promise<void> {
    const read = this.#polls % FULL_POLL_EVERY === 0 ? workDueAt : markedAt;
    const idle = [...this.#options.queueKeys].filter(([account]) => !this.#turns.has(account));
    for (let i = 0; i < idle.length; i += POLL_CHUNK)
      await Promise.all(
        idle.slice(i, i + POLL_CHUNK).map(async ([account, queueKey]) => {
          const at = await read(this.#options.connection, queueKey, now);
          if (at !== undefined) await this.#due.ring(account, at);
        }),
      );
    this.#polls += 1;
    this.#polledAt = now;
  }
}

interface TurnScripts {
  moneyqClaimTurns(...args: (string | number)[]): Promise<unknown>;
  moneyqReleaseTurn(...args: string[]): Promise<unknown>;
}
