import type { Redis } from "ioredis";
import { JobResult } from "./job-result.js";

/**
 * A needs_reconciliation result joins its account's reconciliation backlog (a sorted set by
 * time, trimmed to the retention); replaying the job takes it out (ResultsStore.forget).
 * KEYS[3] the backlog; ARGV[4] result, ARGV[5] now in ms, ARGV[6] job id.
 */
const BACKLOG_LUA = `
if ARGV[4] == 'needs_reconciliation' then
  redis.call('ZADD', KEYS[3], ARGV[5], ARGV[6])
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', tonumber(ARGV[5]) - tonumber(ARGV[2]))
end`;

/** Sets the job's result marker and appends to the stream only if the marker is new: one result per job. */
const EMIT_SCRIPT = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'result', ARGV[1])
${BACKLOG_LUA}
  return 1
end
return 0`;

/**
 * As EMIT_SCRIPT, and in the same step the row of the job's batch, if the batch exists: its
 * report line, its counters (a replayed row moves from its old result to its new one) and
 * its state once every accepted row has a result. One script, so no crash can count a
 * result twice or lose one. KEYS[4] batch meta, KEYS[5] batch rows; ARGV[7] row, ARGV[8]
 * report line, ARGV[9] finishedAt.
 */
const EMIT_BATCH_SCRIPT = `
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 0 end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'result', ARGV[1])
${BACKLOG_LUA}
if redis.call('EXISTS', KEYS[4]) == 0 then return 1 end
local previous = redis.call('HGET', KEYS[5], ARGV[7])
local before = previous and cjson.decode(previous).result or 'queued'
if before == 'queued' then
  redis.call('HINCRBY', KEYS[4], 'done', 1)
else
  redis.call('HINCRBY', KEYS[4], 'n:' .. before, -1)
end
redis.call('HINCRBY', KEYS[4], 'n:' .. ARGV[4], 1)
redis.call('HSET', KEYS[5], ARGV[7], ARGV[8])
local meta = redis.call('HMGET', KEYS[4], 'state', 'accepted', 'done', 'n:succeeded', 'skipped')
local state = meta[1]
if state == 'queued' or state == 'validating' then
  state = 'running'
  redis.call('HSET', KEYS[4], 'state', state, 'startedAt', ARGV[9])
end
if tonumber(meta[3]) >= tonumber(meta[2]) and state ~= 'validating' then
  if state ~= 'cancelled' then
    local ok = tonumber(meta[4]) == tonumber(meta[2]) and tonumber(meta[5]) == 0
    state = ok and 'completed' or 'completed_with_failures'
  end
  redis.call('HSET', KEYS[4], 'state', state, 'finishedAt', ARGV[9])
end
return 1`;

type EmitKeys = [marker: string, stream: string, backlog: string];
type EmitArgs = [
  json: string,
  ttlMs: string,
  maxLen: string,
  result: string,
  nowMs: string,
  jobId: string,
];

type EmittingRedis = Redis & {
  moneyqEmitResult(...args: [...EmitKeys, ...EmitArgs]): Promise<number>;
  moneyqEmitBatchResult(
    ...args: [
      ...EmitKeys,
      batch: string,
      rows: string,
      ...EmitArgs,
      row: string,
      line: string,
      finishedAt: string,
    ]
  ): Promise<number>;
};

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
  readonly #redis: Redis;
  readonly #options: ResultsStoreOptions;

  constructor(redis: Redis, options: ResultsStoreOptions) {
    // A defined command runs by SHA: the script's text is not sent with every result.
    if (!("moneyqEmitResult" in redis)) {
      redis.defineCommand("moneyqEmitResult", { numberOfKeys: 3, lua: EMIT_SCRIPT });
      redis.defineCommand("moneyqEmitBatchResult", { numberOfKeys: 5, lua: EMIT_BATCH_SCRIPT });
    }
    this.#redis = redis;
    this.#options = options;
    this.streamKey = `${options.prefix}:results`;
  }

  /** Records `result` as the job's terminal result; false if the job already had one. */
  async emit(result: JobResult): Promise<boolean> {
    const redis = this.#redis as EmittingRedis;
    const keys: EmitKeys = [
      this.#markerKey(result.jobId),
      this.streamKey,
      backlogKey(this.#options.prefix, result.account),
    ];
    const args: EmitArgs = [
      JSON.stringify(result),
      String(this.#options.retentionMs),
      String(this.#options.maxLen),
      result.result,
      String(Date.now()),
      result.jobId,
    ];
    if (result.batchId === undefined || result.row === undefined) {
      return (await redis.moneyqEmitResult(...keys, ...args)) === 1;
    }
    const batch = batchKeys(this.#options.prefix, result.batchId);
    const added = await redis.moneyqEmitBatchResult(
      ...keys,
      batch.meta,
      batch.rows,
      ...args,
      String(result.row),
      JSON.stringify(reportLineOf(result)),
      result.finishedAt,
    );
    return added === 1;
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
