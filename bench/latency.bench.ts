// The rate gate with Redis far away: three worker processes (test/helpers/worker-main.mjs, on
// dist/) share one account at R = 30 behind a TCP proxy that delays every Redis reply by 0, 5,
// 10, 25 and 50 ms; the sandbox runs in its own process and logs each request it receives.
// Reported per delay, from that log: requests a second over the run (first to last request) as
// a share of R, the most requests in any sliding second, and the shortest time any R + 1
// consecutive requests took (1,000 ms or more: never over R; what it has over 1,000 ms is what
// the jitter between slot and arrival could still take). Rounds go through every delay in
// turn, so drift in the machine hits them alike. Run: npm run bench -- latency (needs Redis at
// REDIS_URL, default redis://127.0.0.1:6379).
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { createLogger } from "../src/logger.js";
import type { JobInput } from "../src/queues/job-envelope.js";
import { Producer } from "../src/queues/producer.js";
import { createRedis } from "../src/redis/connection.js";
import { everyKeyPattern, keyspace, resultsStreamKey } from "../src/redis/keys.js";
import type { LoggedRequest } from "../src/sandbox/request-log.js";
import { startDelayProxy } from "../test/helpers/delay-proxy.js";
import { maxInAnySecond } from "../test/helpers/sliding-window.js";
import { ensureBuild } from "../test/setup/ensure-build.js";
import { body, REDIS_URL } from "./pipeline-run.js";

const RATE = 30;
const WORKERS = 3;
const CONCURRENCY = 16;
const ROWS = 300;
const DELAYS_MS = [0, 5, 10, 25, 50];
const ROUNDS = 3;
/** A run that has not finished by then is reported as such. */
const RUN_LIMIT_MS = 120_000;
const ACCOUNT = "latency";
const root = join(import.meta.dirname, "..");

interface Run {
  readonly delayMs: number;
  readonly requests: number;
  readonly results: number;
  readonly perSecond: number;
  readonly maxInSecond: number;
  /** The shortest time R + 1 consecutive requests took at the sandbox (ms); none: fewer came. */
  readonly tightestMs: number | undefined;
  readonly missed: number;
}

/** A child that prints one line once it is ready, and that line. */
async function started(child: ChildProcess, ready: RegExp): Promise<string> {
  let err = "";
  child.stderr?.on("data", (c: Buffer) => {
    err += c.toString();
  });
  return new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
      const line = ready.exec(out);
      if (line) resolve(line[0]);
    });
    child.once("exit", (code) => reject(new Error(`child exited with ${code}: ${err}`)));
  });
}

const stopped = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });

await ensureBuild();
const sandboxChild = spawn(
  process.execPath,
  ["--import", "tsx", join(import.meta.dirname, "lanes-sandbox.ts"), "20"],
  { stdio: ["ignore", "pipe", "inherit"] },
);
const sandbox = JSON.parse(await started(sandboxChild, /^.*\n/)) as {
  baseUrl: string;
  controlUrl: string;
  apiKey: string;
};
const proxy = await startDelayProxy(REDIS_URL);
const connection = createRedis(REDIS_URL, createLogger("silent"), "bench");

async function lastSeq(): Promise<number> {
  const log = (
    (await fetch(`${sandbox.controlUrl}/requests`).then((r) => r.json())) as {
      data: { requests: LoggedRequest[] };
    }
  ).data.requests;
  return log.at(-1)?.seq ?? 0;
}

async function missedSlots(metricsUrl: string): Promise<number> {
  const exposition = await (await fetch(metricsUrl)).text();
  return Number(/^moneyq_rate_slots_missed_total\{[^}]*\} (\S+)$/m.exec(exposition)?.[1] ?? 0);
}

async function run(delayMs: number): Promise<Run> {
  proxy.setDelay(delayMs);
  const prefix = `bench-${randomUUID().slice(0, 8)}`;
  const env = {
    PATH: process.env.PATH ?? "",
    REDIS_URL: proxy.url,
    PAYMENTS_API_URL: sandbox.baseUrl,
    MONEYQ_REDIS_PREFIX: prefix,
    MONEYQ_LOG_LEVEL: "warn",
    MONEYQ_METRICS_PORT: "0",
    MONEYQ_ACCOUNTS: JSON.stringify([
      { alias: ACCOUNT, apiKey: sandbox.apiKey, ratePerSecond: RATE, concurrency: CONCURRENCY },
    ]),
  };
  const workers = Array.from({ length: WORKERS }, () =>
    spawn(process.execPath, [join(root, "test/helpers/worker-main.mjs")], {
      cwd: root,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    }),
  );
  const metricsUrls = (await Promise.all(workers.map((w) => started(w, /^ready (\S+)\n/m)))).map(
    (line) => line.slice("ready ".length).trim(),
  );
  const from = await lastSeq();
  const producer = new Producer({
    connection,
    prefix,
    accounts: [ACCOUNT],
    maxAttempts: 8,
    retentionMs: 3_600_000,
  });
  const rows: JobInput[] = Array.from({ length: ROWS }, (_, i) => ({
    kind: "payout.bank",
    account: ACCOUNT,
    batchId: "latency",
    reference: `r${i}`,
    request: { body },
  }));
  await producer.enqueueMany(rows);
  const stream = resultsStreamKey(keyspace(prefix), ACCOUNT);
  const deadline = performance.now() + RUN_LIMIT_MS;
  let results = 0;
  while (results < ROWS && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    results = await connection.xlen(stream);
  }
  const missed = (await Promise.all(metricsUrls.map(missedSlots))).reduce((a, b) => a + b, 0);
  await Promise.all(workers.map(stopped));
  await producer.close();
  const log = (
    (await fetch(`${sandbox.controlUrl}/requests?afterSeq=${from}`).then((r) => r.json())) as {
      data: { requests: LoggedRequest[] };
    }
  ).data.requests;
  const times = log.map((r) => r.at).sort((a, b) => a - b);
  const busySeconds =
    times.length > 1 ? ((times.at(-1) as number) - (times[0] as number)) / 1000 : 0;
  const keys = await connection.keys(everyKeyPattern(prefix));
  for (let i = 0; i < keys.length; i += 500) await connection.del(...keys.slice(i, i + 500));
  return {
    delayMs,
    requests: times.length,
    results,
    perSecond: busySeconds > 0 ? (times.length - 1) / busySeconds : 0,
    maxInSecond: maxInAnySecond(times),
    tightestMs:
      times.length > RATE
        ? Math.min(...times.slice(RATE).map((t, i) => t - (times[i] as number)))
        : undefined,
    missed,
  };
}

const runs: Run[] = [];
try {
  for (let round = 0; round < ROUNDS; round += 1)
    for (const delayMs of DELAYS_MS) {
      const r = await run(delayMs);
      runs.push(r);
      console.error(`round ${round + 1}, ${delayMs} ms: ${JSON.stringify(r)}`);
    }
} finally {
  await proxy.close();
  await connection.quit();
  sandboxChild.kill("SIGTERM");
}

const median = (xs: readonly number[]) =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
console.log(
  `Redis replies delayed by a TCP proxy; ${WORKERS} worker processes (concurrency ${CONCURRENCY} each) on one account at R = ${RATE}; ${ROWS} bank payouts a run (PENDING, then confirmed by lookups); sandbox in its own process; ${ROUNDS} rounds; node ${process.version}`,
);
console.log(
  "| added delay | results | share of R: median (range) | most in a sliding second (of all rounds) | R + 1 requests took at least (ms, of all rounds) | slots missed a run: median (range) |",
);
console.log("|---|---|---|---|---|---|");
for (const delayMs of DELAYS_MS) {
  const of = runs.filter((r) => r.delayMs === delayMs);
  const spans = of.flatMap((r) => (r.tightestMs === undefined ? [] : [r.tightestMs]));
  const shares = of.map((r) => r.perSecond / RATE);
  const missed = of.map((r) => r.missed);
  console.log(
    `| ${delayMs} ms | ${of.map((r) => r.results).join(", ")} of ${ROWS} | ${median(shares).toFixed(3)} (${Math.min(...shares).toFixed(3)}-${Math.max(...shares).toFixed(3)}) | ${Math.max(...of.map((r) => r.maxInSecond))} | ${spans.length > 0 ? Math.min(...spans) : "fewer than R + 1 requests"} | ${median(missed)} (${Math.min(...missed)}-${Math.max(...missed)}) |`,
  );
}
process.exit(0);
