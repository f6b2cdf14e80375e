import { Coalescer } from "../redis/coalescer.js";
import type { RedisConnection } from "../redis/connection.js";
import {
  backlogKey,
  fingerprintKey,
  type Keyspace,
  keyspace,
  legacyJobKeys,
  resultMarkerKey,
  resultsStreamKey,
} from "../redis/keys.js";
import { EMIT_RESULTS } from "../redis/scripts/emit-results.js";
import { FORGET_RESULT } from "../redis/scripts/forget-result.js";
import { defineScripts } from "../redis/scripts/script.js";
import { perSlotGroup } from "../redis/slot-groups.js";
import { batchRowOf } from "./batch-row.js";
import { jobEventHead } from "./event-envelope.js";
import { JobResult } from "./job-result.js";

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
}

/**
 * The results stream (one per account on a cluster) and the per-job result markers that make
 * emission exactly-once.
 */
export class ResultsStore {
  readonly keyspace: Keyspace;
  readonly #redis: EmittingRedis;
  readonly #options: ResultsStoreOptions;
  readonly #emissions: Coalescer<JobResult, boolean>;

  constructor(redis: RedisConnection, options: ResultsStoreOptions) {
    defineScripts(redis, EMIT_RESULTS, FORGET_RESULT);
    this.#redis = redis as EmittingRedis;
    this.#options = options;
    this.keyspace = keyspace(options.prefix, redis.isCluster);
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
   * Records `result` as the job's terminal result; false if the job already had one. Not
   * waited for on a cluster's replicas: a failover that loses it loses the job's completion,
   * written after it, too (docs/scaling.md, "What a failover can lose").
   */
  emit(result: JobResult): Promise<boolean> {
    return this.#emissions.add(result);
  }

  /** One script call per slot group (per account on a cluster, to the account's stream). */
  #emitMany(results: readonly JobResult[]): Promise<boolean[]> {
    return perSlotGroup(
      this.keyspace,
      results,
      (r) => r.account,
      (group) => this.#emitToStream(group),
    );
  }

  async #emitToStream(results: readonly JobResult[]): Promise<boolean[]> {
    const keys = [this.streamKey((results[0] as JobResult).account)];
    const args = [
      String(this.#options.retentionMs),
      String(this.#options.maxLen),
      String(Date.now()),
    ];
    const space = this.keyspace;
    for (const result of results) {
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
      );
      const json = JSON.stringify(result);
      args.push(
        json,
        result.result,
        result.jobId,
        String(result.row ?? 0),
        batch?.line ?? "",
        result.finishedAt,
        jobEventHead(result),
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
