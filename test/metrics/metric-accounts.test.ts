import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { loadConfig, METRICS_ACCOUNTS_UNSET_UP_TO } from "../../src/config/load-config.js";
import { MetricAccounts, OTHER_ACCOUNTS } from "../../src/metrics/metric-accounts.js";
import { createPipelineMetrics } from "../../src/metrics/pipeline-metrics.js";
import { issuesOf } from "../helpers/config-issues.js";

const URL_V1 = "http://127.0.0.1:4010/v1";
const KEY = "sk_sandbox_metrics_accounts_0001";

/** An environment with `n` accounts, a0 to a<n-1>. */
function withAccounts(n: number, extra: Record<string, string> = {}) {
  const accounts = Array.from({ length: n }, (_, i) => ({ alias: `a${i}`, apiKey: KEY }));
  return { PAYMENTS_API_URL: URL_V1, MONEYQ_ACCOUNTS: JSON.stringify(accounts), ...extra };
}

/** A finished job of every account: the counters and histograms a job touches. */
function workOfEach(metrics: ReturnType<typeof createPipelineMetrics>, aliases: string[]) {
  for (const account of aliases) {
    const labels = { account, kind: "payout", result: "succeeded" };
    metrics.jobsFinished.inc({ queue: `payments-${account}`, ...labels });
    metrics.jobDuration.observe(labels, 0.2);
    metrics.jobProcessingDuration.observe(labels, 0.1);
    for (const operation of ["createPayout", "getPayout"]) {
      metrics.upstreamRequests.inc({ account, operation, status_class: "2xx" });
      metrics.upstreamDuration.observe({ account, operation }, 0.01);
    }
  }
}

describe("which accounts have series of their own", () => {
  it("every account up to the limit when MONEYQ_METRICS_ACCOUNTS is unset, none past it", () => {
    const up = METRICS_ACCOUNTS_UNSET_UP_TO;
    expect(loadConfig(withAccounts(up)).metrics.accounts).toBe("all");
    expect(loadConfig(withAccounts(up + 1)).metrics.accounts).toEqual([]);
    const all = { MONEYQ_METRICS_ACCOUNTS: "all" };
    expect(loadConfig(withAccounts(up + 1, all)).metrics.accounts).toBe("all");
    const named = { MONEYQ_METRICS_ACCOUNTS: "a3, a70" };
    expect(loadConfig(withAccounts(up + 30, named)).metrics.accounts).toEqual(["a3", "a70"]);
  });

  it("refuses an account that is not configured, naming it and the rule", () => {
    expect(issuesOf(withAccounts(2, { MONEYQ_METRICS_ACCOUNTS: "a1,nope" }))).toEqual([
      {
        variable: "MONEYQ_METRICS_ACCOUNTS",
        rule: '"nope" is not a configured account: give "all" or configured aliases separated by commas',
      },
    ]);
  });

  it("counts the unnamed accounts' jobs under _other, so /metrics does not grow with them", async () => {
    const aliases = Array.from({ length: 1_000 }, (_, i) => `a${i}`);
    const scraped = async (named: "all" | string[]) => {
      const registry = new Registry();
      const metrics = createPipelineMetrics(registry, new MetricAccounts(aliases, named));
      workOfEach(metrics, aliases);
      return { text: await registry.metrics(), metrics };
    };
    const few = await scraped(["a7"]);
    const finished = (await few.metrics.jobsFinished.get()).values;
    expect(new Map(finished.map((v) => [v.labels.account, v.value]))).toEqual(
      new Map([
        ["a7", 1],
        [OTHER_ACCOUNTS, aliases.length - 1],
      ]),
    );
    const labels = new Set([...few.text.matchAll(/account="([^"]*)"/g)].map((m) => m[1]));
    expect(labels).toEqual(new Set(["a7", OTHER_ACCOUNTS]));
    const every = await scraped("all");
    expect(new Set([...every.text.matchAll(/account="([^"]*)"/g)].map((m) => m[1])).size).toBe(
      aliases.length,
    );
    // Two accounts' series against a thousand's.
    expect(few.text.length * 100).toBeLessThan(every.text.length);
  });
});
