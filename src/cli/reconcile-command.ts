import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Command } from "commander";
import { loadConfig } from "../config/load-config.js";
import { CliError } from "./cli-error.js";
import { EXIT } from "./exit-codes.js";
import { runAction } from "./run-action.js";
import { selectedAccounts } from "./selected-accounts.js";

interface ReconcileFlags {
  readonly account?: string;
  readonly since?: string;
  readonly until?: string;
  readonly out?: string;
}

const DAY_MS = 86_400_000;

/** An ISO 8601 time with its offset, as a flag gives it. */
function timeOf(flag: string, value: string | undefined, fallback: number): string {
  if (value === undefined) return new Date(fallback).toISOString();
  const ms = /(Z|[+-]\d\d:\d\d)$/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms))
    throw new CliError(`${flag}: must be an ISO 8601 time with its offset (2026-11-01T00:00:00Z)`);
  return new Date(ms).toISOString();
}

/** `moneyq reconcile`: moneyq's results against the provider's transactions, per account. */
export function reconcileCommand(): Command {
  return new Command("reconcile")
    .description(
      "sweep the provider's transaction, stable transaction and order lists over a window, through each account's rate gate, and report where they and moneyq's results differ (docs/reconciliation.md); resolves the jobs left to reconciliation whose outcome a record proves, and records reversals. Exit 0: no drift; 1: drift found; 3: a sweep could not finish",
    )
    .option("--account <alias>", "this account only (default: every configured account)")
    .option("--since <time>", "the window's start, ISO 8601 with offset (default: 24 hours ago)")
    .option("--until <time>", "the window's end, excluded (default: now)")
    .option(
      "--out <dir>",
      "write each account's report there, as CSV and JSON lines (default: JSON lines on standard output)",
    )
    .action(runAction(runReconcile));
}

async function runReconcile(flags: ReconcileFlags): Promise<number> {
  const now = Date.now();
  const since = timeOf("--since", flags.since, now - DAY_MS);
  const until = timeOf("--until", flags.until, now);
  if (Date.parse(until) <= Date.parse(since))
    throw new CliError("--until: must be later than --since");
  const config = loadConfig();
  const { baseUrl, accounts } = selectedAccounts(
    config,
    flags.account,
    "reconcile needs PAYMENTS_API_URL and the accounts' keys: it reads a real provider's books",
  );
  // Loaded when it runs: the rest of the CLI starts without the service's dependencies.
  const { openProviderAdapter } = await import("../service/provider-adapter.js");
  const adapter = await openProviderAdapter(config);
  const { openOperatorRedis } = await import("./open-operator.js");
  const { SWEEP_LEASE_MS } = await import("../processors/sweeper.js");
  const { openSweeper } = await import("../service/open-sweeper.js");
  const { driftCsv } = await import("./drift-report.js");
  const redis = await openOperatorRedis(config);
  const sweeper = openSweeper(config, redis.connection, baseUrl, adapter);
  let drift = 0;
  let failed = 0;
  try {
    for (const account of accounts) {
      try {
        // A sweep of a process that died holds the account until its lease lapses.
        const report = await sweeper.sweep(account, { since, until }, 2 * SWEEP_LEASE_MS);
        drift += report.items.length;
        const lines = report.items.map((i) => JSON.stringify(i));
        if (flags.out === undefined) for (const line of lines) process.stdout.write(`${line}\n`);
        else {
          mkdirSync(flags.out, { recursive: true });
          const base = join(
            flags.out,
            `drift-${account.alias}-${report.since.replace(/[:.]/g, "")}`,
          );
          writeFileSync(`${base}.jsonl`, lines.map((l) => `${l}\n`).join(""));
          writeFileSync(`${base}.csv`, driftCsv(report.items));
        }
        process.stderr.write(
          `account ${account.alias}: ${report.records} provider records from ${report.since} to ${report.until}${report.resumed ? " (a stopped sweep resumed)" : ""}: ${report.items.length} drift items, ${report.resolved} resolved, ${report.reversed} reversals\n`,
        );
      } catch (error) {
        failed += 1;
        process.stderr.write(
          `account ${account.alias}: the sweep did not finish: ${(error as Error).message}\n`,
        );
      }
    }
  } finally {
    await sweeper.close();
    await redis.close();
  }
  if (failed > 0) return EXIT.notVerified;
  return drift > 0 ? EXIT.failures : EXIT.ok;
}
