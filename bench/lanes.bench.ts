// Lanes under a backlog: at R = 50 with 10,000 bulk rows queued on the account, (a) the delay
// from enqueue to submission of 200 urgent jobs spread through the run, and (b) the delay from
// a PENDING answer to its first lookup, both in slot intervals, measured at the sandbox (its
// request log) in a child process. Run: npm run bench -- lanes (needs Redis at REDIS_URL).
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { Registry } from "prom-client";
import { loadConfig } from "../src/config/load-config.js";
import { createLogger } from "../src/logger.js";
import type { JobInput } from "../src/queues/job-envelope.js";
import { Producer } from "../src/queues/producer.js";
import { accountQueueName } from "../src/queues/queue-names.js";
import { bullKeys } from "../src/redis/bullmq-internals.js";
import { createRedis } from "../src/redis/connection.js";
import { everyKeyPattern, keyspace, resultsStreamKey } from "../src/redis/keys.js";
import type { LoggedRequest } from "../src/sandbox/request-log.js";
import { startWorkers } from "../src/service/start-workers.js";
import { body, REDIS_URL } from "./pipeline-run.js";

const RATE = 50;
const MARGIN_MS = 40;
const INTERVAL_MS = (1000 + MARGIN_MS) / RATE;
const BULK = 10_000;
const URGENT = 200;
const URGENT_EVERY_MS = 200;
const FIRST_LOOKUP_MS = 200;
const CONCURRENCY = 32;

const child = spawn(
  process.execPath,
  ["--import", "tsx", join(import.meta.dirname, "lanes-sandbox.ts"), "20"],
  { stdio: ["ignore", "pipe", "inherit"] },
);
const sandbox = JSON.parse(
  await new Promise<string>((resolve) => {
    let out = "";
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
      if (out.includes("\n")) resolve(out);
    });
  }),
) as { baseUrl: string; controlUrl: string; apiKey: string };

const prefix = `bench-${randomUUID().slice(0, 8)}`;
const config = loadConfig({
  REDIS_URL,
  PAYMENTS_API_URL: sandbox.baseUrl,
  MONEYQ_REDIS_PREFIX: prefix,
  MONEYQ_LOG_LEVEL: "silent",
  MONEYQ_RATE_WINDOW_MARGIN_MS: String(MARGIN_MS),
  MONEYQ_CONFIRM_FIRST_DELAY_MS: String(FIRST_LOOKUP_MS),
  MONEYQ_ACCOUNTS: JSON.stringify([
    { alias: "bench", apiKey: sandbox.apiKey, ratePerSecond: RATE, concurrency: CONCURRENCY },
  ]),
});
const connection = createRedis(REDIS_URL, createLogger("silent"), "bench");
const producer = new Producer({
  connection,
  prefix,
  accounts: ["bench"],
  maxAttempts: 8,
  retentionMs: 3_600_000,
});
const payout = (fields: Partial<JobInput>): JobInput =>
  ({ kind: "payout.bank", account: "bench", request: { body }, ...fields }) as JobInput;
await producer.enqueueMany(
  Array.from({ length: BULK }, (_, i) => payout({ batchId: "lanes", reference: `r${i}` })),
);
const workers = await startWorkers({
  config,
  connection,
  logger: createLogger("silent"),
  registry: new Registry(),
});
await new Promise((r) => setTimeout(r, 3000));

const enqueuedAt = new Map<string, number>();
for (let n = 0; n < URGENT; n += 1) {
  const key = `urgent-${n}`;
  enqueuedAt.set(key, Date.now());
  await producer.enqueue(payout({ idempotencyKey: key }));
  await new Promise((r) => setTimeout(r, URGENT_EVERY_MS));
}
await new Promise((r) => setTimeout(r, 2000));
const missed = (await workers.metrics.rateSlotsMissed.get()).values.reduce(
  (n, v) => n + v.value,
  0,
);
await workers.close();
const backlog = await connection.zcard(
  bullKeys.prioritized(bullKeys.queue(prefix, accountQueueName(keyspace(prefix), "bench"))),
);

const log = (
  (await fetch(`${sandbox.controlUrl}/requests`).then((r) => r.json())) as {
    data: { requests: LoggedRequest[] };
  }
).data.requests;
const results = (
  await connection.xrange(resultsStreamKey(keyspace(prefix), "bench"), "-", "+")
).map(
  ([, fields]) =>
    JSON.parse(fields[1] as string) as { idempotencyKey: string; upstreamId?: string },
);

// (a) enqueue to submission, in slot intervals.
const submittedAt = new Map<string, number>();
for (const r of log)
  if (r.method === "POST" && r.idempotencyKey && !submittedAt.has(r.idempotencyKey))
    submittedAt.set(r.idempotencyKey, r.at);
const urgent = [...enqueuedAt].map(
  ([key, at]) => ((submittedAt.get(key) ?? Infinity) - at) / INTERVAL_MS,
);

// (b) PENDING answer (its submission at the sandbox) to the first lookup, once the run is steady.
const firstLookup = new Map<string, number>();
for (const r of log) {
  if (r.method !== "GET") continue;
  const id = r.path.split("/").at(-1)?.split("?")[0] ?? "";
  if (!firstLookup.has(id)) firstLookup.set(id, r.at);
}
const steadyFrom = (log[0]?.at ?? 0) + 3000;
const lookupDelays: number[] = [];
for (const r of results) {
  const sent = submittedAt.get(r.idempotencyKey);
  const looked = r.upstreamId === undefined ? undefined : firstLookup.get(r.upstreamId);
  if (sent !== undefined && looked !== undefined && sent >= steadyFrom)
    lookupDelays.push(looked - sent);
}

const quantile = (xs: number[], q: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
};
const fmt = (x: number) => x.toFixed(2);
console.log(
  `lanes at R = ${RATE} (slot interval ${INTERVAL_MS.toFixed(1)} ms), concurrency ${CONCURRENCY}, ${BULK} bulk rows queued (${backlog} still queued at the end), node ${process.version}`,
);
console.log(`slots missed (the process woke up too late for them): ${missed}`);
console.log("| measure | p50 | p99 | max | target (p99) |");
console.log("|---|---|---|---|---|");
console.log(
  `| (a) urgent job, enqueue to submission, slot intervals (${urgent.length} jobs) | ${fmt(quantile(urgent, 0.5))} | ${fmt(quantile(urgent, 0.99))} | ${fmt(Math.max(...urgent))} | 3 |`,
);
const overFirst = lookupDelays.map((d) => (d - FIRST_LOOKUP_MS) / INTERVAL_MS);
console.log(
  `| (b) PENDING to first lookup, slot intervals beyond the first lookup delay of ${FIRST_LOOKUP_MS} ms (${lookupDelays.length} payouts) | ${fmt(quantile(overFirst, 0.5))} | ${fmt(quantile(overFirst, 0.99))} | ${fmt(Math.max(...overFirst))} | 3 |`,
);

await producer.close();
const keys = await connection.keys(everyKeyPattern(prefix));
for (let i = 0; i < keys.length; i += 500) await connection.del(...keys.slice(i, i + 500));
await connection.quit();
child.kill("SIGTERM");
process.exit(0);
