import { Gauge, type Registry } from "prom-client";
import type { RedisConnection } from "../redis/connection.js";
import { keyspace, sweepKeys } from "../redis/keys.js";
import { type MetricAccounts, OTHER_ACCOUNTS } from "./metric-accounts.js";

/** What a finished sweep leaves (processors/sweep-state.ts, SweepSummary), as read here. */
interface Summary {
  readonly finishedAt: string;
  readonly drift: Readonly<Record<string, { readonly items: number; readonly amount: string }>>;
}

/**
 * The last reconciliation sweep of each account, read from Redis at scrape time (so every
 * process shows it, whichever swept): its drift items and their amount per kind and currency,
 * and when it finished (docs/reconciliation.md). Accounts without series of their own are
 * summed under "_other", whose last sweep is the oldest of theirs.
 */
export function registerReconciliationMetrics(
  registry: Registry,
  options: {
    readonly connection: RedisConnection;
    readonly prefix: string;
    /** Which accounts have series of their own. */
    readonly accounts: MetricAccounts;
    /** Every account's alias. */
    readonly aliases: readonly string[];
  },
): void {
  const space = keyspace(options.prefix, options.connection.isCluster);
  const registers = [registry];
  let cached: { at: number; value: Promise<Map<string, Summary>> } | undefined;
  const summaries = () => {
    const now = Date.now();
    if (cached === undefined || now - cached.at > 1_000)
      cached = { at: now, value: readAll(options.connection, space, options.aliases) };
    return cached.value;
  };
  const drift = (
    name: string,
    help: string,
    pick: (d: { items: number; amount: string }) => number,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ["account", "kind", "currency"],
      registers,
      async collect() {
        this.reset();
        for (const [alias, summary] of await summaries())
          for (const [key, d] of Object.entries(summary.drift)) {
            const [kind = "", currency = ""] = key.split(" ");
            // After the reset each series starts at 0: "_other" sums its accounts'.
            this.inc({ account: options.accounts.label(alias), kind, currency }, pick(d));
          }
      },
    });
  drift(
    "moneyq_reconciliation_drift_items",
    "Drift items the account's last reconciliation sweep found, by kind and currency.",
    (d) => d.items,
  );
  drift(
    "moneyq_reconciliation_drift_amount",
    "The summed amount of those drift items, by kind and currency.",
    (d) => Number(d.amount),
  );
  new Gauge({
    name: "moneyq_reconciliation_last_sweep_timestamp_seconds",
    help: "When the account's last reconciliation sweep finished (Unix time).",
    labelNames: ["account"],
    registers,
    async collect() {
      this.reset();
      let oldest: number | undefined;
      for (const [alias, summary] of await summaries()) {
        const at = Date.parse(summary.finishedAt) / 1000;
        if (options.accounts.isNamed(alias)) this.set({ account: alias }, at);
        else oldest = Math.min(oldest ?? at, at);
      }
      if (oldest !== undefined) this.set({ account: OTHER_ACCOUNTS }, oldest);
    },
  });
}

async function readAll(
  connection: RedisConnection,
  space: ReturnType<typeof keyspace>,
  accounts: readonly string[],
): Promise<Map<string, Summary>> {
  const out = new Map<string, Summary>();
  try {
    const raws = await Promise.all(
      accounts.map((a) => connection.get(sweepKeys(space, a).summary)),
    );
    raws.forEach((raw, i) => {
      if (raw !== null) out.set(accounts[i] as string, JSON.parse(raw) as Summary);
    });
  } catch {
    // A scrape while Redis is away shows no sweep rather than failing.
  }
  return out;
}
