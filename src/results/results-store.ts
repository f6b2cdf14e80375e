import type { Redis } from "ioredis";
import { Coalescer } from "../coalescer.js";
import { JobResult } from "./job-result.js";

/**
 * Records terminal results, each only if its job had none: the job's marker is set, the
 * result appended to the stream, a needs_reconciliation result joins its account's
 * reconciliation backlog (a sorted set by time, trimmed to the retention; replaying the job
 * takes it out, ResultsStore.forget), and, if the job's batch exists, the batch's row is
 * written: its report line, its counters (a replayed row moves from its old result to its new
 * one) and its state once every accepted row has a result. One script, so no crash can count
 * a result twice or lose one; one call records several results in turn, as separate calls
 * would. KEYS[1] is the stream; result i has KEYS[4i-2..4i+1]: marker, backlog, batch meta,
 * batch rows; and ARGV[3+6(i-1)+1..6]: JSON, result, job id, row, report line ('' without a
 * batch), finishedAt.
 * ARGV[1] marker TTL in ms, ARGV[2] stream length, ARGV[3] now in ms. Answers 1 or 0 a result.
 */
const EMIT_SCRIPT = `
local ttl, maxLen, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
local out = {}
for i = 1, (#KEYS - 1) / 4 do
  local k, a = 1 + 4 * (i - 1), 3 + 6 * (i - 1)
  local json, result, jobId, row, line, finishedAt =
    ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], ARGV[a + 6]
  if not redis.call('SET', KEYS[k + 1], json, 'NX', 'PX', ttl) then
    out[i] = 0
  else
    out[i] = 1
    redis.call('XADD', KEYS[1], 'MAXLEN', '~', maxLen, '*', 'result', json)
    if result == 'needs_reconciliation' then
      redis.call('ZADD', KEYS[k + 2], now, jobId)
      redis.call('ZREMRANGEBYSCORE', KEYS[k + 2], '-inf', now - tonumber(ttl))
    end
    if line ~= '' and redis.call('EXISTS', KEYS[k + 3]) == 1 then
      local meta, rows = KEYS[k + 3], KEYS[k + 4]
      local previous = redis.call('HGET', rows, row)
      local before = previous and cjson.decode(previous).result or 'queued'
      if before == 'queued' then
        redis.call('HINCRBY', meta, 'done', 1)
      else
        redis.call('HINCRBY', meta, 'n:' .. before, -1)
      end
      redis.call('HINCRBY', meta, 'n:' .. result, 1)
      redis.call('HSET', rows, row, line)
      local m = redis.call('HMGET', meta, 'state', 'accepted', 'done', 'n:succeeded', 'skipped')
      local state = m[1]
      if state == 'queued' or state == 'validating' then
        state = 'running'
        redis.call('HSET', meta, 'state', state, 'startedAt', finishedAt)
      end
      if tonumber(m[3]) >= tonumber(m[2]) and state ~= 'validating' then
        if state ~= 'cancelled' then
          local ok = tonumber(m[4]) == tonumber(m[2]) and tonumber(m[5]) == 0
          state = ok and 'completed' or 'completed_with_failures'
        end
        redis.call('HSET', meta, 'state', state, 'finishedAt', finishedAt)
      end
    end
  end
end
return out`;

type EmittingRedis = Redis & {
  moneyqEmitResults(keyCount: number, ...keysAndArgs: string[]): Promise<number[]>;
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

/** A row's line in its batch's results report. */
export interface ReportLine {
  readonly row: number;
  readonly reference: string | undefined;
  readonly idempotencyKey: string | undefined;
  /** A job result, or `queued` (no result yet), `invalid` or `duplicate` (never enqueued). */
  readonly result: string;
  readonly upstreamId?: string | undefined;
  readonly upstreamStatus?: string | undefined;
  /** `code: message` of a result that is not a success, or the row's validation issues. */
  readonly error?: string | undefined;
}

/** The Redis keys of one batch. */
export function batchKeys(prefix: string, batchId: string) {
  return { meta: `${prefix}:batch:${batchId}`, rows: `${prefix}:batch:${batchId}:rows` };
}

/** An account's reconciliation backlog: ids of its jobs whose last result is needs_reconciliation. */
export function backlogKey(prefix: string, account: string): string {
  return `${prefix}:needs-reconciliation:${account}`;
}

export function reportLineOf(result: JobResult): ReportLine {
  return {
    row: result.row ?? 0,
    reference: result.reference,
    idempotencyKey: result.idempotencyKey,
    result: result.result,
    ...(result.upstreamId !== undefined && { upstreamId: result.upstreamId }),
    ...(result.upstreamStatus !== undefined && { upstreamStatus: result.upstreamStatus }),
    ...(result.result !== "succeeded" && {
      error: [result.code, result.message].filter(Boolean).join(": "),
    }),
  };
}

/** The results stream and the per-job result markers that make emission exactly-once. */
export class ResultsStore {
  readonly streamKey: string;
  readonly #redis: EmittingRedis;
  readonly #options: ResultsStoreOptions;
  readonly #emissions: Coalescer<JobResult, boolean>;

  constructor(redis: Redis, options: ResultsStoreOptions) {
    // A defined command runs by SHA: the script's text is not sent with every result.
    if (!("moneyqEmitResults" in redis))
      redis.defineCommand("moneyqEmitResults", { lua: EMIT_SCRIPT });
    this.#redis = redis as EmittingRedis;
    this.#options = options;
    this.streamKey = `${options.prefix}:results`;
    this.#emissions = new Coalescer((results) => this.#emitMany(results), MAX_RESULTS_PER_CALL);
  }

  /** Records `result` as the job's terminal result; false if the job already had one. */
  emit(result: JobResult): Promise<boolean> {
    return this.#emissions.add(result);
  }

  async #emitMany(results: readonly JobResult[]): Promise<boolean[]> {
    const keys = [this.streamKey];
    const args = [
      String(this.#options.retentionMs),
      String(this.#options.maxLen),
      String(Date.now()),
    ];
    for (const result of results) {
      const marker = this.#markerKey(result.jobId);
      const inBatch = result.batchId !== undefined && result.row !== undefined;
      const batch = inBatch ? batchKeys(this.#options.prefix, result.batchId as string) : undefined;
      keys.push(
        marker,
        backlogKey(this.#options.prefix, result.account),
        batch?.meta ?? marker,
        batch?.rows ?? marker,
      );
      args.push(
        JSON.stringify(result),
        result.result,
        result.jobId,
        String(result.row ?? 0),
        inBatch ? JSON.stringify(reportLineOf(result)) : "",
        result.finishedAt,
      );
    }
    const added = await this.#redis.moneyqEmitResults(keys.length, ...keys, ...args);
    return added.map((n) => n === 1);
  }

  /** The job's terminal result, if it has one. */
  async get(jobId: string): Promise<JobResult | undefined> {
    const raw = await this.#redis.get(this.#markerKey(jobId));
    return raw === null ? undefined : JobResult.parse(JSON.parse(raw));
  }

  /** Forgets a job's result (and takes it out of the reconciliation backlog) so that a replay can emit a new one. */
  async forget(account: string, jobId: string): Promise<void> {
    await this.#redis
      .multi()
      .del(this.#markerKey(jobId))
      .zrem(backlogKey(this.#options.prefix, account), jobId)
      .exec();
  }

  #markerKey(jobId: string): string {
    return `${this.#options.prefix}:result:${jobId}`;
  }
}
