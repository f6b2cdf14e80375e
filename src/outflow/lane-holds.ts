import type { RedisConnection } from "../redis/connection.js";
import { batchKeys, jobHoldKey, type Keyspace, outflowKeys } from "../redis/keys.js";
import { defineCatalogue } from "../redis/scripts/catalogue.js";

type HoldsRedis = RedisConnection & {
  moneyqHoldLane(laneHolds: string, held: string, ...args: string[]): Promise<number>;
  moneyqEndLaneHold(...keysAndArgs: string[]): Promise<string[]>;
};

export type HoldCause = "velocity" | "insufficient_funds";

/** One currency's hold on an account, as the API and console show it. */
export interface LaneHold {
  readonly currency: string;
  readonly cause: HoldCause;
  /** When it ends by itself (ISO 8601); absent: until an operator ends it. */
  readonly until?: string;
  /** The jobs it holds, first held first. */
  readonly jobIds: readonly string[];
}

/** An entry of the account's audit trail of releases, resumes and cancels. */
export interface LaneHoldAudit {
  readonly at: string;
  readonly action: string;
  readonly cause: string;
  readonly currency: string;
  readonly by: string;
  readonly jobs: number;
}

/** A pass past the velocity limits is kept this long for its job to use it. */
const PASS_KEPT_MS = 7 * 86_400_000;
/** Entries of the audit trail kept per account. */
const AUDIT_KEPT = 10_000;

/**
 * The holds of an account's currency lanes (docs/safety.md): insufficient funds (begun here,
 * by the job the provider refused) and velocity limits (begun by the rate gate's script), the
 * jobs they hold, and an operator's end of them, audited.
 */
export class LaneHolds {
  readonly #redis: HoldsRedis;
  readonly #space: Keyspace;

  constructor(redis: RedisConnection, space: Keyspace) {
    defineCatalogue(redis);
    this.#redis = redis as HoldsRedis;
    this.#space = space;
  }

  /**
   * Holds `currency`'s lane for insufficient funds, `jobId` first; for `retryMs` (undefined:
   * until resumed). True when this began the hold.
   */
  async holdForFunds(
    account: string,
    currency: string,
    jobId: string,
    retryMs: number | undefined,
  ): Promise<boolean> {
    const keys = outflowKeys(this.#space, account);
    const began = await this.#redis.moneyqHoldLane(
      keys.laneHolds,
      keys.held,
      currency,
      jobId,
      String(retryMs ?? 0),
    );
    return began === 1;
  }

  /** The account's holds in force, by currency and cause. */
  async list(account: string): Promise<LaneHold[]> {
    const keys = outflowKeys(this.#space, account);
    const [lanes, held] = await Promise.all([
      this.#redis.hgetall(keys.laneHolds),
      this.#redis.zrange(keys.held, 0, "-1"),
    ]);
    const now = Date.now();
    const holds = new Map<string, { cause: HoldCause; currency: string; until?: number }>();
    for (const [field, value] of Object.entries(lanes)) {
      const velocity = field.startsWith("velocity:");
      const until = Number(velocity ? value : value.split("|")[1]);
      if (until > 0 && until <= now) continue;
      const currency = velocity ? field.slice("velocity:".length) : field;
      const cause: HoldCause = velocity ? "velocity" : "insufficient_funds";
      holds.set(`${cause}|${currency}`, { cause, currency, ...(until > 0 && { until }) });
    }
    const jobs = new Map<string, string[]>();
    for (const member of held) {
      const [cause = "", currency = "", ...rest] = member.split("|");
      const stem = `${cause}|${currency}`;
      if (!holds.has(stem) && cause === "velocity")
        holds.set(stem, { cause: "velocity", currency });
      const list = jobs.get(stem);
      if (list === undefined) jobs.set(stem, [rest.join("|")]);
      else list.push(rest.join("|"));
    }
    return [...holds].map(([stem, h]) => ({
      currency: h.currency,
      cause: h.cause,
      ...(h.until !== undefined && { until: new Date(h.until).toISOString() }),
      jobIds: jobs.get(stem) ?? [],
    }));
  }

  /** Whether a hold still keeps the job (a release or resume takes it out). */
  async holds(account: string, cause: HoldCause, currency: string, jobId: string) {
    const member = `${cause}|${currency}|${jobId}`;
    return (await this.#redis.zscore(outflowKeys(this.#space, account).held, member)) !== null;
  }

  /** The ids of the jobs a hold of `cause` keeps in `currency`, first held first. */
  async heldJobs(account: string, cause: HoldCause, currency: string): Promise<string[]> {
    const stem = `${cause}|${currency}|`;
    const held = await this.#redis.zrange(outflowKeys(this.#space, account).held, 0, "-1");
    return held.filter((m) => m.startsWith(stem)).map((m) => m.slice(stem.length));
  }

  /**
   * Ends a hold for the jobs named and hands back those it still held, once (a second call gets
   * none): `release` lets them past the velocity limits once; `resume` and `cancel` give no
   * pass. The lane's hold ends once it holds no job, or at a resume. Audited.
   */
  async end(
    account: string,
    cause: HoldCause,
    currency: string,
    action: "release" | "resume" | "cancel",
    by: string,
    jobIds: readonly string[],
  ): Promise<string[]> {
    const keys = outflowKeys(this.#space, account);
    return this.#redis.moneyqEndLaneHold(
      keys.laneHolds,
      keys.held,
      keys.passes,
      keys.audit,
      cause,
      currency,
      action,
      by,
      String(PASS_KEPT_MS),
      String(AUDIT_KEPT),
      ...jobIds,
    );
  }

  /** Whoever enqueued a job: its batch's submitter, or its own hold's. */
  async submitterOf(
    account: string,
    jobId: string,
    batchId: string | undefined,
  ): Promise<string | undefined> {
    const key =
      batchId === undefined
        ? jobHoldKey(this.#space, account, jobId)
        : batchKeys(this.#space, account, batchId).meta;
    return (await this.#redis.hget(key, "submittedBy")) ?? undefined;
  }

  /** The account's audit trail of ended holds, newest first. */
  async audit(account: string, count = 100): Promise<LaneHoldAudit[]> {
    const entries = await this.#redis.xrevrange(
      outflowKeys(this.#space, account).audit,
      "+",
      "-",
      "COUNT",
      count,
    );
    return entries.map(([id, fields]) => {
      const f = Object.fromEntries(
        fields.flatMap((v, i) => (i % 2 === 0 ? [[v, fields[i + 1] ?? ""]] : [])),
      ) as Record<string, string>;
      return {
        at: new Date(Number(id.split("-")[0])).toISOString(),
        action: f.action ?? "",
        cause: f.cause ?? "",
        currency: f.currency ?? "",
        by: f.by ?? "",
        jobs: Number(f.jobs ?? 0),
      };
    });
  }
}
