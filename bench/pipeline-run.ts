// The pieces the pipeline and metrics benchmarks share: a stub upstream in a child process
// and one moneyq run from enqueue to the last result.
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { Registry } from "prom-client";
import { type Config, loadConfig } from "../src/config/load-config.js";
import { createLogger } from "../src/logger.js";
import { createMetricsRegistry } from "../src/metrics/metrics-registry.js";
import type { PipelineMetrics } from "../src/metrics/pipeline-metrics.js";
import { registerRedisMetrics } from "../src/metrics/redis-metrics.js";
import type { JobInput } from "../src/queues/job-envelope.js";
import { Producer } from "../src/queues/producer.js";
import type { RedisConnection } from "../src/redis/connection.js";
import { createRedis } from "../src/redis/connection.js";
import { everyKeyPattern, keyspace, resultsStreamKey } from "../src/redis/keys.js";
import { startWorkers } from "../src/service/start-workers.js";
import { startTracing } from "../src/tracing/start-tracing.js";

export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
export const CONCURRENCY = 64;
export const KEY = "sk_live_bench_key_0001";

export async function stub(delayMs: number): Promise<{ child: ChildProcess; baseUrl: string }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(import.meta.dirname, "stub-upstream.ts"), String(delayMs)],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  return { child, baseUrl: (await firstJsonLine(child)).baseUrl as string };
}

/** The first line a child process prints, as JSON: where the server it started listens. */
export async function firstJsonLine(child: ChildProcess): Promise<Record<string, string>> {
  const line = await new Promise<string>((resolve) => {
    let out = "";
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
      if (out.includes("\n")) resolve(out);
    });
  });
  return JSON.parse(line);
}

/** CPU time, in µs, the stub and Redis have used so far: both share the machine with the benchmark. */
export interface OthersCpu {
  readonly stubUs: number;
  readonly redisUs: number;
}

export async function othersCpu(redis: RedisConnection, baseUrl: string): Promise<OthersCpu> {
  const [stubAnswer, info] = await Promise.all([
    fetch(`${new URL(baseUrl).origin}/cpu`).then((r) => r.json() as Promise<{ cpuUs: number }>),
    redis.info("cpu"),
  ]);
  const seconds = (field: string) =>
    Number(new RegExp(`${field}:([\\d.]+)`).exec(info)?.[1] ?? NaN);
  return {
    stubUs: stubAnswer.cpuUs,
    redisUs: (seconds("used_cpu_user") + seconds("used_cpu_sys")) * 1e6,
  };
}

/** CPU µs a job of the benchmark process, the stub and Redis over one timed run. */
export interface CpuPerJob {
  readonly bench: number;
  readonly stub: number;
  readonly redis: number;
}

export function cpuPerJob(
  bench: NodeJS.CpuUsage,
  before: OthersCpu,
  after: OthersCpu,
  jobs: number,
): CpuPerJob {
  return {
    bench: (bench.user + bench.system) / jobs,
    stub: (after.stubUs - before.stubUs) / jobs,
    redis: (after.redisUs - before.redisUs) / jobs,
  };
}

export const body = {
  amount: 1,
  currency: "NGN",
  bankCode: "044",
  accountNumber: "0123456789",
  accountName: "Ada Obi",
  bankName: "Access Bank",
} as const;

/** Metrics that record nothing: what moneyq costs without them. */
const NO_METRICS = new Proxy(
  {},
  { get: () => ({ inc() {}, observe() {}, set() {} }) },
) as PipelineMetrics;

/**
 * moneyq: producer, then workers until every job has its result on the stream. With metrics
 * "on" (the default) the process has a service's full registry and is scraped every second,
 * more often than the usual 15 s; "off" records nothing. With `tracesTo`, an OTLP base URL,
 * tracing is on and every span is exported there (protobuf, the default protocol).
 */
export async function moneyq(
  baseUrl: string,
  jobs: number,
  ratePerSecond: number,
  metrics: "on" | "off" = "on",
  tracesTo?: string,
  /** With `tracesTo`: the `parentbased_traceidratio` sampler's ratio; every trace when unset. */
  sampleRatio?: number,
): Promise<{
  perSecond: number;
  busyPerSecond: number;
  enqueuePerSecond: number;
  cpu: CpuPerJob;
}> {
  const prefix = `bench-${randomUUID().slice(0, 8)}`;
  const config: Config = loadConfig({
    REDIS_URL,
    PAYMENTS_API_URL: baseUrl,
    PAYMENTS_API_KEY: KEY,
    MONEYQ_REDIS_PREFIX: prefix,
    MONEYQ_LOG_LEVEL: "silent",
    MONEYQ_CONCURRENCY: String(CONCURRENCY),
    MONEYQ_RATE_LIMIT_PER_SECOND: String(ratePerSecond),
    ...(tracesTo !== undefined && { OTEL_EXPORTER_OTLP_ENDPOINT: tracesTo }),
    ...(sampleRatio !== undefined && {
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: String(sampleRatio),
    }),
  });
  const tracing = await startTracing(config, createLogger("silent"));
  const connection = createRedis(REDIS_URL, createLogger("warn"), "bench");
  const producer = new Producer({
    connection,
    prefix,
    accounts: ["default"],
    maxAttempts: 8,
    retentionMs: 60_000,
    tracer: tracing.tracer,
  });
  const inputs: JobInput[] = Array.from({ length: jobs }, (_, i) => ({
    kind: "payout.bank",
    account: "default",
    batchId: "bench",
    reference: `r${i}`,
    request: { body },
  }));
  const enqueueStarted = performance.now();
  await producer.enqueueMany(inputs);
  const enqueueSeconds = (performance.now() - enqueueStarted) / 1000;
  const others = await othersCpu(connection, baseUrl);
  const started = performance.now();
  const cpu = process.cpuUsage();
  const registry = metrics === "on" ? createMetricsRegistry("all") : new Registry();
  // Counted in this process as each result is recorded, as the baseline counts its jobs.
  let recorded = 0;
  let allRecorded: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => {
    allRecorded = resolve;
  });
  const workers = await startWorkers({
    config,
    connection,
    logger: createLogger("silent"),
    registry,
    ...(metrics === "off" && { metrics: NO_METRICS }),
    tracer: tracing.tracer,
    onResult: async () => {
      recorded += 1;
      if (recorded === jobs) allRecorded();
    },
  });
  let scrapes: NodeJS.Timeout | undefined;
  if (metrics === "on") {
    registerRedisMetrics(registry, {
      connection,
      prefix,
      queues: workers.queues,
      pauses: workers.pauses,
      resultsStreams: [workers.results.streamKey("default")],
      cacheMs: config.metrics.cacheMs,
    });
    scrapes = setInterval(() => void registry.metrics(), 1000);
  }
  await finished;
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const othersAfter = await othersCpu(connection, baseUrl);
  const finishedAt = (
    await connection.xrange(resultsStreamKey(keyspace(prefix), "bench"), "-", "+")
  ).map(([id]) => Number(id.split("-")[0]));
  if (finishedAt.length !== jobs)
    throw new Error(`${jobs} jobs gave ${finishedAt.length} results on the stream`);
  const busySeconds = ((finishedAt.at(-1) as number) - (finishedAt[0] as number)) / 1000;
  clearInterval(scrapes);
  await workers.close();
  await producer.close();
  await tracing.close();
  const keys = await connection.keys(everyKeyPattern(prefix));
  for (let i = 0; i < keys.length; i += 500) await connection.del(...keys.slice(i, i + 500));
  await connection.quit();
  return {
    perSecond: jobs / seconds,
    busyPerSecond: (jobs - 1) / busySeconds,
    enqueuePerSecond: jobs / enqueueSeconds,
    cpu: cpuPerJob(used, others, othersAfter, jobs),
  };
}
