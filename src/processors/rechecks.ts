import type { Logger } from "pino";
import { PaymentsRateLimitError } from "../client/errors.js";
import type { PaymentsClient } from "../client/payments-client.js";
import type { AccountConfig } from "../config/load-config.js";
import type { PipelineMetrics } from "../metrics/pipeline-metrics.js";
import { LOOKUP_OPERATIONS } from "../provider/profile.js";
import { readAnswerFields, statusMeaning } from "../provider/read-answer.js";
import { JOB_KINDS, type JobKind } from "../queues/job-kinds.js";
import type { RedisConnection } from "../redis/connection.js";
import { type Keyspace, recheckKey } from "../redis/keys.js";
import { defineCatalogue } from "../redis/scripts/catalogue.js";
import { nextRecheck, type Recheck } from "../results/recheck.js";
import type { ResultsStore } from "../results/results-store.js";
import type { Reversals } from "../results/reversals.js";
import { rateLimitPauseMs } from "./classify.js";
import type { RateGate } from "./rate-gate.js";
import { takeReadSlot } from "./read-slot.js";

type RecheckRedis = RedisConnection & {
  moneyqClaimRechecks(key: string, now: string, leaseMs: string, count: string): Promise<string[]>;
};

/** A claimed re-check is another process's again after this long (a process that died). */
const LEASE_MS = 120_000;
/** An account with no re-check due is asked again after this at most. */
const IDLE_ASK_MS = 60_000;
/** Re-checks one account's claim takes at most. */
const CLAIMED_AT_ONCE = 16;
/** A re-check whose lookup fails is tried this many times, then passed for the next one. */
const TRIES = 5;
/** A re-check not sent (a pause, a late slot, room made for waiting lookups) waits this at least. */
const NOT_SENT_WAIT_MS = 1_000;

/** What a re-check's lookup found: reversed or not, and what the provider said of it. */
interface Found {
  readonly reversed: boolean;
  readonly said: { readonly status?: string; readonly reversedBy?: string };
}

export interface RecheckDeps {
  readonly connection: RedisConnection;
  readonly space: Keyspace;
  readonly gate: RateGate;
  readonly accounts: readonly AccountConfig[];
  readonly clients: ReadonlyMap<string, PaymentsClient>;
  /** Each account's queue as the gate names it (`<prefix>:<queue>`), for the bulk lane. */
  readonly queueKeys: ReadonlyMap<string, string>;
  readonly results: ResultsStore;
  readonly reversals: Reversals;
  readonly metrics: PipelineMetrics;
  readonly logger: Logger;
  /** MONEYQ_RECHECK_AFTER: when each re-check is due after the success (ms). */
  readonly afterMs: readonly number[];
  /** How late after its slot a request may still leave (half the rate window's margin). */
  readonly toleranceMs: number;
}

/**
 * Looks succeeded payouts up again after their success (docs/reconciliation.md): each
 * account's due re-checks are claimed, sent through its rate gate in the bulk lane (so they
 * make room for every waiting confirmation and urgent job, and never slow them), and read
 * through the profile; a reversal or return is recorded once, as `job.reversed`. Nothing is
 * ever sent but a lookup.
 */
export class Rechecks {
  readonly #deps: RecheckDeps;
  readonly #redis: RecheckRedis;
  readonly #busy = new Set<string>();
  /** An account whose last claim found nothing is asked again only from then (ms, Date.now). */
  readonly #askFrom = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> = Promise.resolve();
  #closed = false;

  constructor(deps: RecheckDeps) {
    defineCatalogue(deps.connection);
    this.#deps = deps;
    this.#redis = deps.connection as RecheckRedis;
  }

  /** Polls each account's re-checks, often enough for the first one to be on time. */
  start(): void {
    if (this.#deps.afterMs.length === 0 || this.#timer !== undefined) return;
    const first = this.#deps.afterMs[0] as number;
    const everyMs = Math.min(5_000, Math.max(200, Math.floor(first / 10)));
    this.#timer = setInterval(() => {
      this.#running = Promise.all(this.#deps.accounts.map((a) => this.#tick(a)));
    }, everyMs);
    this.#timer.unref();
  }

  /** Stops polling and waits for the re-checks under way. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    await this.#running.catch(() => undefined);
  }

  /** One account's due re-checks, one at a time; a tick never overlaps the last one's. */
  async #tick(account: AccountConfig): Promise<void> {
    if (this.#busy.has(account.alias)) return;
    if (Date.now() < (this.#askFrom.get(account.alias) ?? 0)) return;
    this.#busy.add(account.alias);
    try {
      const key = recheckKey(this.#deps.space, account.alias);
      const now = Date.now();
      const claimed = await this.#redis.moneyqClaimRechecks(
        key,
        String(now),
        String(LEASE_MS),
        String(CLAIMED_AT_ONCE),
      );
      if (claimed.length === 0) await this.#askLater(account.alias, key, now);
      else this.#askFrom.delete(account.alias);
      for (const member of claimed) {
        if (this.#closed) break;
        await this.#recheck(account, key, member);
      }
    } catch (error) {
      this.#deps.logger.warn(
        { account: account.alias, err: (error as Error).message },
        "re-checks of succeeded payouts failed; they are tried again",
      );
    } finally {
      this.#busy.delete(account.alias);
    }
  }

  /**
   * Nothing was due: the account is asked again when its earliest re-check is due, or after the
   * first re-check delay (a re-check added meanwhile is due that long after its success), or
   * after a minute at most (a success that already showed a reversal is due at once): an idle
   * account then costs Redis three commands a minute, not two every tick. After a claim that
   * found work (whose re-checks may be rescheduled sooner), it is asked again at every tick.
   */
  async #askLater(account: string, key: string, now: number): Promise<void> {
    const [, earliest] = await this.#deps.connection.zrange(key, "0", "0", "WITHSCORES");
    const first = this.#deps.afterMs[0] as number;
    const due = earliest === undefined ? Infinity : Number(earliest);
    this.#askFrom.set(account, Math.min(now + Math.min(first, IDLE_ASK_MS), due));
  }

  /** Looks one succeeded payout up again, and records what it found. */
  async #recheck(account: AccountConfig, key: string, member: string): Promise<void> {
    const recheck = parseRecheck(member);
    const { results, reversals } = this.#deps;
    const result = recheck && (await results.get(account.alias, recheck.j));
    // Gone, or recorded already (by the sweep): nothing to look at.
    if (
      !recheck ||
      result?.result !== "succeeded" ||
      (await results.reversalOf(account.alias, recheck.j))
    ) {
      await this.#redis.zrem(key, member);
      return;
    }
    const slot = await takeReadSlot(this.#deps.gate, {
      account: account.alias,
      perSecond: account.ratePerSecond,
      lane: "bulk",
      queueKey: this.#deps.queueKeys.get(account.alias),
      toleranceMs: this.#deps.toleranceMs,
    });
    if (!slot.send) {
      const wait =
        "pausedMs" in slot ? Math.max(slot.pausedMs, NOT_SENT_WAIT_MS) : NOT_SENT_WAIT_MS;
      await this.#redis.zadd(key, Date.now() + wait, member);
      return;
    }
    let found: Found | undefined;
    try {
      found = await this.#lookUp(account, recheck);
    } catch (error) {
      return this.#failed(account, key, member, recheck, error);
    }
    if (found === undefined) return this.#next(key, member, recheck);
    if (found.reversed) {
      await reversals.record(result, { ...found.said, foundBy: "recheck" }, member);
      this.#deps.metrics.reversals.inc({ account: account.alias, found_by: "recheck" });
      this.#deps.metrics.rechecks.inc({ account: account.alias, outcome: "reversed" });
      this.#deps.logger.warn(
        { account: account.alias, jobId: recheck.j, upstreamId: recheck.id, ...found.said },
        "a succeeded payout was reversed by the provider",
      );
      return;
    }
    this.#deps.metrics.rechecks.inc({ account: account.alias, outcome: "unchanged" });
    await this.#next(key, member, recheck);
  }

  /** The payout's lookup, read through the profile (and adapter): reversed, or not. */
  async #lookUp(account: AccountConfig, recheck: Recheck): Promise<Found | undefined> {
    const client = this.#deps.clients.get(account.alias) as PaymentsClient;
    const lookup = JOB_KINDS[recheck.k as JobKind]?.lookup;
    if (lookup !== "transaction" && lookup !== "stable-transaction") return undefined;
    const operation = LOOKUP_OPERATIONS[lookup];
    const params =
      lookup === "transaction"
        ? { transactionId: recheck.id }
        : { subAccountId: recheck.s, transactionId: recheck.id };
    const answer = await client.send(operation, { params } as never);
    const fields = readAnswerFields(client.profile, operation, answer.data, client.adapter);
    const byWord =
      fields.status !== undefined && statusMeaning(client.profile, fields.status) === "reversed";
    const said = {
      ...(fields.status !== undefined && { status: fields.status }),
      ...(fields.reversedBy !== undefined && { reversedBy: fields.reversedBy }),
    };
    return { reversed: byWord || fields.reversedBy !== undefined, said };
  }

  /** A lookup that failed: tried again later (a 429 pauses the account), then passed. */
  async #failed(
    account: AccountConfig,
    key: string,
    member: string,
    recheck: Recheck,
    error: unknown,
  ): Promise<void> {
    this.#deps.metrics.rechecks.inc({ account: account.alias, outcome: "error" });
    if (error instanceof PaymentsRateLimitError) {
      const pauseMs = rateLimitPauseMs(error.retryAfterMs);
      await this.#deps.gate.pause(account.alias, pauseMs);
      await this.#redis.zadd(key, Date.now() + pauseMs, member);
      return;
    }
    const tries = (recheck.a ?? 0) + 1;
    if (tries >= TRIES) {
      this.#deps.logger.warn(
        { account: account.alias, jobId: recheck.j, err: (error as Error | undefined)?.message },
        "a re-check of a succeeded payout failed every time; the next one will look again",
      );
      return this.#next(key, member, recheck);
    }
    const retried = JSON.stringify({ ...recheck, a: tries });
    await this.#redis
      .multi()
      .zrem(key, member)
      .zadd(key, Date.now() + 1_000 * 2 ** tries, retried)
      .exec();
  }

  /** The payout's next re-check, or none after the last. */
  async #next(key: string, member: string, recheck: Recheck): Promise<void> {
    const next = nextRecheck({ ...recheck, a: 0 }, this.#deps.afterMs);
    const write = this.#redis.multi().zrem(key, member);
    if (next !== undefined) write.zadd(key, next.dueMs, next.member);
    await write.exec();
  }
}

function parseRecheck(member: string): Recheck | undefined {
  try {
    const r = JSON.parse(member) as Recheck;
    return typeof r.j === "string" && typeof r.id === "string" && typeof r.n === "number"
      ? r
      : undefined;
  } catch {
    return undefined;
  }
}
