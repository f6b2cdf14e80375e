import { randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BatchKind } from "../batches/batch-kinds.js";
import type { BatchStatus } from "../batches/batch-reports.js";
import { renderReport } from "../batches/report-format.js";
import { embeddedUpstream, loadConfig } from "../config/load-config.js";
import { createLogger } from "../logger.js";
import { closeRedis } from "../redis/close.js";
import { createRedis } from "../redis/connection.js";
import { everyKeyPattern } from "../redis/keys.js";
import { scanKeys } from "../redis/scan-keys.js";
import { RESULT_KINDS } from "../results/job-result.js";
import { EMBEDDED_DEV_TOKEN, type Service, startService } from "../service/start-service.js";
import { EXIT } from "./exit-codes.js";
import { fileRows } from "./file-rows.js";
import { waitForBatches } from "./wait-for-batches.js";

/** The shipped example batches the demo pays out. */
export const DEMO_BATCHES: readonly { readonly file: string; readonly kind: BatchKind }[] = [
  { file: "demo-bank-payouts.csv", kind: "payout.bank" },
  { file: "demo-momo-payouts.csv", kind: "payout.momo" },
];

const EXAMPLES_DIR = fileURLToPath(new URL("../../examples/", import.meta.url));

function summaryTable(statuses: readonly BatchStatus[]): string {
  const header = ["batch", "kind", "rows", ...RESULT_KINDS, "state"];
  const rows = statuses.map((s) => [
    s.batchId.slice(0, 12),
    s.kind,
    String(s.rows),
    ...RESULT_KINDS.map((k) => String(s.counts[k])),
    s.state,
  ]);
  const total = ["total", "", String(statuses.reduce((n, s) => n + s.rows, 0))].concat(
    RESULT_KINDS.map((k) => String(statuses.reduce((n, s) => n + s.counts[k], 0))),
    [""],
  );
  const all = [header, ...rows, total];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? "").length)));
  return all
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i] as number))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

async function writeReport(service: Service, status: BatchStatus, path: string): Promise<void> {
  const out = createWriteStream(path);
  for await (const text of renderReport(
    service.batches.report(status.account, status.batchId),
    "csv",
  ))
    out.write(text);
  await new Promise<void>((resolve, reject) =>
    out.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
}

/** Deletes the demo's keys from a Redis that outlives it. */
async function purge(url: string, prefix: string): Promise<void> {
  const redis = createRedis(url, createLogger("warn", process.stderr), "demo cleanup");
  try {
    // One key a command: on a cluster, the keys of one page may lie in many slots.
    await scanKeys(redis, everyKeyPattern(prefix), async (keys) => {
      await Promise.all(keys.map((key) => redis.unlink(key)));
    });
  } finally {
    await closeRedis(redis);
  }
}

/** The demo: pays the example batches, writes their reports and prints the summary. */
export async function runDemo(flags: { reportDir?: string }): Promise<number> {
  const base = loadConfig();
  // A prefix of its own: the demo never mixes with a service's jobs, and runs again afresh.
  const config = Object.freeze({
    ...base,
    redisPrefix: `moneyq-demo-${randomUUID().slice(0, 8)}`,
  });
  const service = await startService({
    config,
    role: "all",
    apiPort: 0,
    logger: createLogger("error"),
  });
  const err = (line: string) => process.stderr.write(`${line}\n`);
  try {
    err(service.startupMessage);
    err(
      `API ${service.apiUrl} (token ${embeddedUpstream(config) ? EMBEDDED_DEV_TOKEN : "from MONEYQ_API_TOKENS"})`,
    );
    err(`metrics while it runs: ${service.apiUrl}/metrics`);
    const account = service.accounts[0]?.alias as string;
    const submitted: { account: string; batchId: string }[] = [];
    for (const batch of DEMO_BATCHES) {
      const report = await service.batches.submit({
        account,
        kind: batch.kind,
        source: await fileRows(join(EXAMPLES_DIR, batch.file), batch.kind),
      });
      err(
        `batch ${report.batchId}: ${report.accepted} ${batch.kind} rows from examples/${batch.file}`,
      );
      submitted.push({ account, batchId: report.batchId });
    }
    const statuses = await waitForBatches(service.batches, submitted);
    const dir = flags.reportDir ?? (await mkdtemp(join(tmpdir(), "moneyq-demo-")));
    const reports: string[] = [];
    for (const status of statuses) {
      const path = join(dir, `${status.kind}-results.csv`);
      await writeReport(service, status, path);
      reports.push(path);
    }
    const out = (line: string) => process.stdout.write(`${line}\n`);
    out(summaryTable(statuses));
    const failed = statuses.reduce((n, s) => n + s.accepted - s.counts.succeeded, 0);
    out("");
    out(
      `${failed} rows did not succeed: the sandbox's magic values (docs/sandbox.md) fail them on purpose, and each has its reason in the report.`,
    );
    for (const path of reports) out(`report: ${path}`);
    return statuses.every((s) => s.finishedAt !== undefined) ? EXIT.ok : EXIT.failures;
  } finally {
    await service.close();
    if (!service.embeddedRedis) await purge(service.redisUrl, config.redisPrefix);
  }
}
