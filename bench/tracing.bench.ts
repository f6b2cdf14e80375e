// moneyq with tracing on (every span exported to an OTLP receiver that discards them: the stub
// upstream's /v1/traces), and with one trace in ten sampled (parentbased_traceidratio 0.1),
// against tracing off, in one run, alternating rounds, against a 0 ms and a 50 ms stub.
// Run: npm run bench -- tracing (needs Redis at REDIS_URL).
import { CONCURRENCY, type CpuPerJob, moneyq, stub } from "./pipeline-run.js";

const ROUNDS = 5;
/** The sampled side's ratio: one trace in ten. */
const SAMPLED = 0.1;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const cell = (xs: number[]) =>
  `${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)})`;

/** The spans the receiver has counted so far. */
async function spansReceived(origin: string): Promise<number> {
  return ((await (await fetch(`${origin}/spans`)).json()) as { spans: number }).spans;
}

interface Side {
  readonly perSecond: number[];
  readonly enqueuePerSecond: number[];
  readonly cpuUs: number[];
}
const side = (): Side => ({ perSecond: [], enqueuePerSecond: [], cpuUs: [] });
const record = (
  s: Side,
  run: { perSecond: number; enqueuePerSecond: number; cpu: CpuPerJob },
): void => {
  s.perSecond.push(run.perSecond);
  s.enqueuePerSecond.push(run.enqueuePerSecond);
  s.cpuUs.push(run.cpu.bench);
};

const rows: string[] = [];
for (const delay of [0, 50]) {
  const upstream = await stub(delay);
  const origin = new URL(upstream.baseUrl).origin;
  const jobs = delay === 0 ? 4000 : 2000;
  // Warm-up of both, then rounds that alternate the two, so drift in the machine hits both alike.
  await moneyq(upstream.baseUrl, 500, 1_000_000, "on");
  await moneyq(upstream.baseUrl, 500, 1_000_000, "on", origin);
  await moneyq(upstream.baseUrl, 500, 1_000_000, "on", origin, SAMPLED);
  const off = side();
  const on = side();
  const sampled = side();
  const spansPerJob: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    record(off, await moneyq(upstream.baseUrl, jobs, 1_000_000, "on"));
    const before = await spansReceived(origin);
    record(on, await moneyq(upstream.baseUrl, jobs, 1_000_000, "on", origin));
    spansPerJob.push(((await spansReceived(origin)) - before) / jobs);
    record(sampled, await moneyq(upstream.baseUrl, jobs, 1_000_000, "on", origin, SAMPLED));
  }
  const ratio = (a: number[], b: number[]) => (median(a) / median(b)).toFixed(3);
  rows.push(
    `| ${delay} ms upstream, ${jobs} jobs x ${ROUNDS} | ${cell(off.perSecond)} | ${cell(on.perSecond)} | ${ratio(on.perSecond, off.perSecond)} | ${cell(sampled.perSecond)} | ${ratio(sampled.perSecond, off.perSecond)} | ${ratio(on.enqueuePerSecond, off.enqueuePerSecond)} | ${median(off.cpuUs).toFixed(0)} | ${median(on.cpuUs).toFixed(0)} | ${ratio(on.cpuUs, off.cpuUs)} | ${median(spansPerJob).toFixed(2)} |`,
  );
  upstream.child.kill("SIGTERM");
}

console.log(`tracing cost, concurrency ${CONCURRENCY}, node ${process.version}`);
console.log(
  "| workload | tracing off, jobs/s: median (range) | every span, jobs/s: median (range) | ratio of medians (every span/off) | 1 in 10 sampled, jobs/s | ratio (sampled/off) | enqueue rate, every span/off | process CPU µs a job, off | every span | CPU ratio (every span/off) | spans received a job |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|");
for (const row of rows) console.log(row);
process.exit(0);
