// moneyq's processors against bare BullMQ + undici (the baseline), in one run and one process
// tree, against a zero-latency stub and a 50 ms stub; then the share of a configured rate limit.
// Run: npm run bench -- pipeline (needs Redis at REDIS_URL, default redis://127.0.0.1:6379).
import { randomUUID } from "node:crypto";
import { Queue, Worker } from "bullmq";
import { Pool } from "undici";
import { createLogger } from "../src/logger.js";
import { createRedis } from "../src/redis/connection.js";
import {
  body,
  CONCURRENCY,
  type CpuPerJob,
  cpuPerJob,
  KEY,
  moneyq,
  othersCpu,
  REDIS_URL,
  stub,
} from "./pipeline-run.js";

/** Bare BullMQ + undici: enqueue, then a worker that POSTs each job's body once. */
async function baseline(
  baseUrl: string,
  jobs: number,
): Promise<{ perSecond: number; cpu: CpuPerJob }> {
  const connection = createRedis(REDIS_URL, createLogger("warn"), "bench");
  const prefix = `bench-${randomUUID().slice(0, 8)}`;
  const queue = new Queue("bare", { connection, prefix });
  await queue.addBulk(
    Array.from({ length: jobs }, (_, i) => ({
      name: "payout",
      data: { body, key: `k${i}` },
      opts: { jobId: `j${i}`, removeOnComplete: true },
    })),
  );
  const url = new URL(baseUrl);
  const pool = new Pool(url.origin, { connections: CONCURRENCY });
  let done = 0;
  let allDone: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => {
    allDone = resolve;
  });
  const others = await othersCpu(connection, baseUrl);
  const started = performance.now();
  const cpu = process.cpuUsage();
  const worker = new Worker(
    "bare",
    async (job) => {
      const res = await pool.request({
        path: `${url.pathname}/transaction/transfer/bank`,
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-api-key": KEY,
          idempotencykey: job.data.key,
        },
        body: JSON.stringify(job.data.body),
      });
      await res.body.json();
      done += 1;
      if (done === jobs) allDone();
    },
    { connection, prefix, concurrency: CONCURRENCY },
  );
  await finished;
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const othersAfter = await othersCpu(connection, baseUrl);
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  await pool.close();
  await connection.quit();
  return { perSecond: jobs / seconds, cpu: cpuPerJob(used, others, othersAfter, jobs) };
}

const ROUNDS = 5;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
/** CPU a job of the round with the median total, part by part: process + Redis + stub = all. */
const cpuCell = (xs: readonly CpuPerJob[]) => {
  const total = (c: CpuPerJob) => c.bench + c.redis + c.stub;
  const m = [...xs].sort((a, b) => total(a) - total(b))[Math.floor(xs.length / 2)] as CpuPerJob;
  return `${m.bench.toFixed(0)} + ${m.redis.toFixed(0)} + ${m.stub.toFixed(0)} = ${total(m).toFixed(0)}`;
};

const rows: string[] = [];
for (const delay of [0, 50]) {
  const upstream = await stub(delay);
  const jobs = delay === 0 ? 4000 : 2000;
  // Warm-up of both, then rounds that alternate the two, so drift in the machine hits both alike.
  await baseline(upstream.baseUrl, 500);
  await moneyq(upstream.baseUrl, 500, 1_000_000);
  const base: number[] = [];
  const ours: number[] = [];
  const baseCpu: CpuPerJob[] = [];
  const ourCpu: CpuPerJob[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const b = await baseline(upstream.baseUrl, jobs);
    base.push(b.perSecond);
    baseCpu.push(b.cpu);
    const m = await moneyq(upstream.baseUrl, jobs, 1_000_000);
    ours.push(m.perSecond);
    ourCpu.push(m.cpu);
  }
  const ratio = median(ours) / median(base);
  rows.push(
    `| ${delay} ms upstream, ${jobs} jobs x ${ROUNDS} | ${median(base).toFixed(0)} (${Math.min(...base).toFixed(0)}-${Math.max(...base).toFixed(0)}) | ${median(ours).toFixed(0)} (${Math.min(...ours).toFixed(0)}-${Math.max(...ours).toFixed(0)}) | ${ratio.toFixed(3)} | ${cpuCell(baseCpu)} | ${cpuCell(ourCpu)} |`,
  );
  upstream.child.kill("SIGTERM");
}
const limited = await stub(0);
const RATE = 200;
// Over the busy period, from the first result to the last: start-up is not throughput.
const achieved = (await moneyq(limited.baseUrl, 2000, RATE)).busyPerSecond;
limited.child.kill("SIGTERM");

console.log(`pipeline throughput, concurrency ${CONCURRENCY}, node ${process.version}`);
console.log(
  "| workload | bare BullMQ + undici, jobs/s: median (range) | moneyq, jobs/s: median (range) | ratio of medians | bare, CPU µs a job (median round): process + Redis + stub | moneyq, CPU µs a job (median round): process + Redis + stub |",
);
console.log("|---|---|---|---|---|---|");
for (const row of rows) console.log(row);
console.log("");
console.log(
  `rate limit ${RATE}/s, 2000 jobs against the 0 ms stub: ${achieved.toFixed(1)} jobs/s = ${(achieved / RATE).toFixed(3)} of the limit`,
);
process.exit(0);
