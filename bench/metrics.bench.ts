// What metrics cost: moneyq's pipeline with its full registry (scraped every second) against
// the same pipeline recording nothing, in one run, rounds alternating, against a zero-latency
// stub (where per-job overhead shows most). Run: npm run bench -- metrics.
import { CONCURRENCY, moneyq, stub } from "./pipeline-run.js";

const ROUNDS = 15;
const JOBS = 4000;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const range = (xs: number[]) => `${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)}`;

const upstream = await stub(0);
await moneyq(upstream.baseUrl, 500, 1_000_000, "off");
await moneyq(upstream.baseUrl, 500, 1_000_000, "on");
const off: number[] = [];
const on: number[] = [];
for (let round = 0; round < ROUNDS; round += 1) {
  // Alternate which goes first, so drift in the machine hits both alike.
  const order = round % 2 === 0 ? (["off", "on"] as const) : (["on", "off"] as const);
  for (const metrics of order) {
    const { perSecond } = await moneyq(upstream.baseUrl, JOBS, 1_000_000, metrics);
    (metrics === "on" ? on : off).push(perSecond);
  }
}
upstream.child.kill("SIGTERM");
const ratio = median(on) / median(off);
console.log(
  `metrics cost, ${JOBS} jobs x ${ROUNDS} rounds, 0 ms stub, concurrency ${CONCURRENCY}, node ${process.version}`,
);
console.log(
  "| metrics off, jobs/s: median (range) | metrics on, jobs/s: median (range) | ratio of medians | cost |",
);
console.log("|---|---|---|---|");
console.log(
  `| ${median(off).toFixed(0)} (${range(off)}) | ${median(on).toFixed(0)} (${range(on)}) | ${ratio.toFixed(3)} | ${((1 - ratio) * 100).toFixed(1)}% |`,
);
process.exit(0);
