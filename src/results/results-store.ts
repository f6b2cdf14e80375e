import { Coalescer } from "../redis/coalescer.js";
import type { RedisConnection } from "../redis/connection.js";
import {
  backlogKey,
  fingerprintKey,
  type Keyspace,
  legacyJobKeys,
  paymentRepeatKeys,
  recheckKey,
  resultMarkerKey,
  resultsStreamKey,
  reversalKey,
  successesKey,
  upstreamIdKey,
} from "../redis/keys.js";
import { redisContext } from "../redis/redis-context.js";
import { perSlotGroup } from "../redis/slot-groups.js";
import { batchRowOf } from "./batch-row.js";
import { jobEventHead, newEventId } from "./event-envelope.js";
import { JobResult } from "./job-result.js";
import { type RecheckTarget, recheckOf } from "./recheck.js";
import type { Reversal } from "./reversals.js";

type EmittingRedis = RedisConnection & {
  moneyqEmitResults(keyCount: number, ...keysAndArgs: string[]): Promise<number[]>;
  moneyqForgetResult(
    marker: string,
    legacyMarker: string,
    backlog: string,
    recorded: string,
    jobId: string,
  ): Promise<number>;
};

/** Results one emission call records at most. */
const MAX_RESULTS_PER_CALL = 128;

export interface ResultsStoreOptions {
  readonly prefix: string;
  /** How long a job's result marker is kept. */
  readonly retentionMs: number;
  /** Approximate length the stream is trimmed to. */
  readonly maxLen: number;
  /** When a succeeded payout is looked up again, after its success (ms); none when left out. */
  readonly recheckAfterMs?: readonly number[];
}

/** What a result's recording needs beyond the result: its payout's re-checks, its money. */
export interface EmitExtras {
  readonly recheck?: RecheckTarget | undefined;
  /** The request's currency and amount (decimal text), for the reconciliation sweep. */
  readonly money?: { readonly currency: string; readonly amount: string } | undefined;
  /** The digest of the payment it made (queues/payment-fingerprint.ts), marked paid or ended. */
  readonly payment?: string | undefined;
}

/** A result to record, and its extras. */
interface Emission {
  readonly result: JobResult;
  readonly extras: EmitExtras;
}

/**
 * The results stream (one per account on a cluster) and the per-job result markers that make
 * emission exactly-once.
 */
export class ResultsStore {
  readonly keyspace: Keyspace;
  readonly #redis: EmittingRedis;
  readonly #options: ResultsStoreOptions;
  readonly #emissions: Coalescer<Emission, boolean>;

  constructor(redis: RedisConnection, options: ResultsStoreOptions) {
    this.#redis = redis as EmittingRedis;
    this.#options = options;
    this.keyspace = redisContext(redis, options.prefix).space;
    this.#emissions = new Coalescer((results) => this.#emitMany(results), MAX_RESULTS_PER_CALL);
  }

  /** The stream `account`'s results and events are appended to. */
  streamKey(account: string): string {
    return resultsStreamKey(this.keyspace, account);
  }

  /** The streams the results of `accounts` go to, each once (one on a single Redis). */
  streamKeys(accounts: readonly string[]): string[] {
    return [...new Set(accounts.map((account) => this.streamKey(account)))];
  }

  /** Approximate length the stream is trimmed to (batch events are appended under it too). */
  get maxLen(): number {
    return this.#options.maxLen;
  }

  /**
   * Records `result` as the job's terminal result; false if the job already had one. A
   * succeeded payout is scheduled for its re-checks (`recheck`: what its lookup needs) in the
   * same step. Not waited for on a cluster's replicas: a failover that loses it loses the job's
   * completion, written after it, too (docs/scaling.md, "What a failover can lose").
   */
  emit(result: JobResult, extras: EmitExtras = {}): Promise<boolean> {
    return this.#emissions.add({ result, extras });
  }

  /** One script call per slot group (per account on a cluster, to the account's stream). */
  #emitMany(emissions: readonly Emission[]): Promise<boolean[]> {
    return perSlotGroup(
      this.keyspace,
      emissions,
      (e) => e.result.account,
      (group) => this.#emitToStream(group),
    );
  }

  async #emitToStream(emissions: readonly Emission[]): Promise<boolean[]> {
    const keys = [this.streamKey((emissions[0] as Emission).result.account)];
    const args = [
      String(this.#options.retentionMs),
      String(this.#options.maxLen),
      String(Date.now()),
    ];
    const space = this.keyspace;
    for (const { result, extras } of emissions) {
      const marker = resultMarkerKey(space, result.account, result.jobId);
      const batch = batchRowOf(space, result);
      keys.push(
        marker,
        backlogKey(space, result.account),
        batch?.meta ?? marker,
        batch?.rows ?? marker,
        fingerprintKey(space, result.account, result.jobId),
        legacyJobKeys.resultMarker(space, result.account, result.jobId),
        legacyJobKeys.fingerprint(space, result.account, result.jobId),
        recheckKey(space, result.account),
        result.upstreamId === undefined
          ? marker
          : upstreamIdKey(space, result.account, result.upstreamId),
        successesKey(space, result.account),
        extras.payment === undefined
          ? marker
          : paymentRepeatKeys(space, result.account, extras.payment).records,
      );
      const scheduled = recheckOf(result, extras.recheck, this.#options.recheckAfterMs ?? []);
      const indexed = {
        j: result.jobId,
        ...(extras.money && { c: extras.money.currency, a: extras.money.amount }),
      };
      const json = JSON.stringify(result);
      args.push(
        json,
        result.result,
        result.jobId,
        String(result.row ?? 0),
        batch?.line ?? "",
        result.finishedAt,
        jobEventHead(result),
        scheduled?.member ?? "",
        String(scheduled?.dueMs ?? 0),
        result.upstreamId === undefined ? "" : JSON.stringify(indexed),
        String(Date.parse(result.finishedAt)),
      );
    }
    const added = await this.#redis.moneyqEmitResults(keys.length, ...keys, ...args);
    return added.map((n) => n === 1);
  }

  /** The job's terminal result, if it has one. */
  async get(account: string, jobId: string): Promise<JobResult | undefined> {
    const raw = await this.recorded(account, jobId);
    return raw === undefined ? undefined : JobResult.parse(JSON.parse(raw));
  }

  /**
   * Appends an event of the account's (its envelope: `type`, a new id, now) to its results
   * stream, and so to its webhooks.
   */
  async appendEvent(account: string, type: string, data: Record<string, unknown>): Promise<void> {
    const event = { type, id: newEventId(), timestamp: new Date().toISOString(), data };
    await this.#redis.xadd(
      this.streamKey(account),
      "MAXLEN",
      "~",
      String(this.#options.maxLen),
      "*",
      "event",
      JSON.stringify(event),
    );
  }

  /** The reversal recorded after the job's success (results/reversals.ts), if any. */
  async reversalOf(account: string, jobId: string): Promise<Reversal | undefined> {
    const raw = await this.#redis.get(reversalKey(this.keyspace, account, jobId));
    return raw === null ? undefined : (JSON.parse(raw) as Reversal);
  }

  /** The job's result as stored, to hand back to `forget`; undefined if it has none. */
  async recorded(account: string, jobId: string): Promise<string | undefined> {
    const [marker, legacy] = await this.#redis.mget(
      resultMarkerKey(this.keyspace, account, jobId),
      legacyJobKeys.resultMarker(this.keyspace, account, jobId),
    );
    return marker ?? legacy ?? undefined;
  }

  /**
   * Forgets a job's result (and takes it out of the reconciliation backlog) so that a replay
   * can emit a new one. Given `recorded` (as `recorded()` read it), only if the result is still
   * that one, so a result recorded since is never lost. True if it was forgotten.
   */
  async forget(account: string, jobId: string, recorded?: string): Promise<boolean> {
    const forgotten = await this.#redis.moneyqForgetResult(
      resultMarkerKey(this.keyspace, account, jobId),
      legacyJobKeys.resultMarker(this.keyspace, account, jobId),
      backlogKey(this.keyspace, account),
      recorded ?? "",
      jobId,
    );
    return forgotten === 1;
  }
}
