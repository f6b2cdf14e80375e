// Child process of bench/batch.bench.ts: reads one CSV file, either with csv-parse alone (the
// baseline) or through moneyq's batch submission (validate every row, then enqueue), and
// prints {seconds, rows, maxRssMb} as one JSON line. Plain JavaScript on the compiled package
// ("moneyq" resolves to dist/), run by plain node as users run moneyq: under tsx, the loader's
// own thread would add some 30 MB to every figure.

import { randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { parse } from "csv-parse";
import { Batches, createLogger, createRedis, csvRows, Producer, ResultsStore } from "moneyq";

const [mode, path] = process.argv.slice(2);
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

const started = performance.now();
let rows = 0;
if (mode === "baseline") {
  for await (const _ of createReadStream(path).pipe(
    parse({ columns: true, bom: true, trim: true }),
  ))
    rows += 1;
} else {
  const prefix = `bench-batch-${randomUUID().slice(0, 8)}`;
  const connection = createRedis(REDIS_URL, createLogger("silent"), "bench");
  const producer = new Producer({
    connection,
    prefix,
    accounts: ["default"],
    maxAttempts: 8,
    retentionMs: 60_000,
  });
  const results = new ResultsStore(connection, { prefix, retentionMs: 60_000, maxLen: 1000 });
  const batches = new Batches({ connection, prefix, producer, results });
  const report = await batches.submit({
    account: "default",
    kind: "payout.bank",
    source: csvRows(createReadStream(path), "payout.bank"),
  });
  rows = report.accepted;
  const seconds = (performance.now() - started) / 1000;
  await producer.close();
  for await (const keys of connection.scanStream({ match: `${prefix}:*`, count: 1000 }))
    if (keys.length > 0) await connection.unlink(...keys);
  await connection.quit();
  process.stdout.write(
    `${JSON.stringify({ seconds, rows, maxRssMb: process.resourceUsage().maxRSS / 1024 })}\n`,
  );
  process.exit(0);
}
const seconds = (performance.now() - started) / 1000;
process.stdout.write(
  `${JSON.stringify({ seconds, rows, maxRssMb: process.resourceUsage().maxRSS / 1024 })}\n`,
);
