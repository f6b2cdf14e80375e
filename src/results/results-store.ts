import type { Redis } from "ioredis";
import { JobResult } from "./job-result.js";

/** Sets the job's result marker and appends to the stream only if the marker is new: one result per job. */
const EMIT_SCRIPT = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'result', ARGV[1])
  return 1
end
return 0`;

type EmittingRedis = Redis & {
  moneyqEmitResult(
    marker: string,
    stream: string,
    result: string,
    ttlMs: string,
    maxLen: string,
  ): Promise<number>;
};

export interface ResultsStoreOptions {
  readonly prefix: string;
  /** How long a job's result marker is kept. */
  readonly retentionMs: number;
  /** Approximate length the stream is trimmed to. */
  readonly maxLen: number;
}

/** The results stream and the per-job result markers that make emission exactly-once. */
export class ResultsStore {
  readonly streamKey: string;
  readonly #redis: Redis;
  readonly #options: ResultsStoreOptions;

  constructor(redis: Redis, options: ResultsStoreOptions) {
    // A defined command runs by SHA: the script's text is not sent with every result.
    if (!("moneyqEmitResult" in redis))
      redis.defineCommand("moneyqEmitResult", { numberOfKeys: 2, lua: EMIT_SCRIPT });
    this.#redis = redis;
    this.#options = options;
    this.streamKey = `${options.prefix}:results`;
  }

  /** Records `result` as the job's terminal result; false if the job already had one. */
  async emit(result: JobResult): Promise<boolean> {
    const added = await (this.#redis as EmittingRedis).moneyqEmitResult(
      this.#markerKey(result.jobId),
      this.streamKey,
      JSON.stringify(result),
      String(this.#options.retentionMs),
      String(this.#options.maxLen),
    );
    return added === 1;
  }

  /** The job's terminal result, if it has one. */
  async get(jobId: string): Promise<JobResult | undefined> {
    const raw = await this.#redis.get(this.#markerKey(jobId));
    return raw === null ? undefined : JobResult.parse(JSON.parse(raw));
  }

  /** Forgets a job's result so that a replay can emit a new one. */
  async forget(jobId: string): Promise<void> {
    await this.#redis.del(this.#markerKey(jobId));
  }

  #markerKey(jobId: string): string {
    return `${this.#options.prefix}:result:${jobId}`;
  }
}
