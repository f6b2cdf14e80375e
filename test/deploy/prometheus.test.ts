import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { createLogger } from "../../src/logger.js";
import { type Service, startService } from "../../src/service/start-service.js";
import { runCli } from "../helpers/cli.js";
import { installed } from "../helpers/installed.js";
import { startPrometheus, type TestPrometheus } from "../helpers/prometheus.js";
import { bankCsv, until, useService } from "../helpers/service.js";

const DEPLOY = join(import.meta.dirname, "../../deploy");
const ALERTS = join(DEPLOY, "prometheus/alerts.yml");
const dashboard = JSON.parse(readFileSync(join(DEPLOY, "grafana/dashboards/moneyq.json"), "utf8"));

interface Panel {
  title: string;
  targets: { expr: string }[];
}
const panels: Panel[] = dashboard.panels;
const alertRules: { alert: string; expr: string }[] = parse(
  readFileSync(ALERTS, "utf8"),
).groups.flatMap((g: { rules: unknown[] }) => g.rules);

/** A panel's expression as Grafana sends it with every queue and account selected. */
function resolved(expr: string): string {
  return expr
    .replaceAll("$__rate_interval", "10s")
    .replaceAll("$queue", ".*")
    .replaceAll("$account", ".*");
}

// The sandbox answers 5% of alpha's requests with a 5xx, and allows it 2 requests/s until moneyq,
// asking for 100/s, has paused on a 429; then 60/s. Pauses and retries so happen however fast or
// slow this machine is, and the batch still ends soon.
// Rows refused for want of funds end failed (their error code counted), holding no lane.
const h = useService({
  MONEYQ_RATE_LIMIT_PER_SECOND: "100",
  MONEYQ_METRICS_CACHE_MS: "500",
  MONEYQ_INSUFFICIENT_FUNDS: "fail",
});
let worker: Service | undefined;
let prometheus: TestPrometheus | undefined;
const hostPort = (url: string) => new URL(url).host;

beforeAll(async () => {
  await h.sb.control("PUT", "/accounts/acct_alpha/faults", {
    body: { errorRate: 0.05, rateLimitPerSecond: 2, seed: 7 },
  });
  worker = await startService({
    config: h.config(),
    role: "worker",
    metricsPort: 0,
    logger: createLogger("silent"),
  });
  prometheus = await startPrometheus(
    [hostPort(h.service().metricsUrl), hostPort(worker.metricsUrl)],
    [ALERTS],
  );
}, 60_000);
afterAll(async () => {
  await prometheus?.close();
  await worker?.close();
});

describe("a real Prometheus scraping moneyq while a batch runs", () => {
  it("scrapes the API process and the worker-only process's metrics port", async () => {
    const p = prometheus as TestPrometheus;
    const targets = await until(
      () => p.get("/api/v1/targets"),
      (t) =>
        t.data.activeTargets.length === 2 &&
        t.data.activeTargets.every((x: { health: string }) => x.health === "up"),
    );
    expect(targets.data.activeTargets).toHaveLength(2);
    const roles = await until(
      () => p.query("count by (role) (moneyq_process_cpu_seconds_total)"),
      (a) => (a.data?.result.length ?? 0) === 2,
    );
    expect(
      ((roles.data?.result ?? []) as { metric: { role: string } }[])
        .map((r) => r.metric.role)
        .sort(),
    ).toEqual(["all", "worker"]);
  });

  it("every expression of every dashboard panel parses and returns data", async () => {
    const p = prometheus as TestPrometheus;
    // Every 25th row pays an account number whose payouts the sandbox refuses for funds.
    const csv = bankCsv("prom", 200, (n, cells) => {
      if (n % 25 === 0) cells.accountNumber = "0000000004";
    });
    const submitted = await h.api("POST", "/v1/batches?kind=payout.bank", { csv });
    expect(submitted.status).toBe(202);
    const value = async (expr: string) =>
      Number(
        ((await p.query(expr)).data?.result[0] as { value: [number, string] } | undefined)
          ?.value[1],
      );
    const pauses = 'sum(moneyq_rate_limit_pauses_total{source="upstream"})';
    await until(
      () => value(pauses),
      (v) => v > 0,
      60_000,
    );
    await h.sb.control("PUT", "/accounts/acct_alpha/faults", {
      body: { errorRate: 0.05, rateLimitPerSecond: 60, seed: 7 },
    });
    // A debit made outside moneyq on beta's books, found by a reconciliation sweep: the drift
    // and last-sweep panels have data.
    await h.sb.control("POST", "/accounts/acct_beta/external-debits", {
      body: { amount: 75, currency: "NGN" },
    });
    const swept = await runCli(["reconcile", "--account", "beta"], h.env());
    expect(swept.stderr).toContain("1 drift items");
    const expressions = panels.flatMap((panel) => panel.targets.map((t) => resolved(t.expr)));
    expect(expressions.length).toBeGreaterThanOrEqual(21);
    const withData = new Set<string>();
    await until(
      async () => {
        for (const expr of expressions) {
          if (withData.has(expr)) continue;
          const answer = await p.query(expr);
          expect(answer, expr).toMatchObject({ status: "success" });
          if ((answer.data?.result.length ?? 0) > 0) withData.add(expr);
        }
        return expressions.filter((e) => !withData.has(e));
      },
      (missing) => missing.length === 0,
      90_000,
    );
    const status = await until(
      () => h.api("GET", `/v1/batches/${submitted.body.batchId}`),
      (s) => s.body.state === "completed_with_failures",
      120_000,
    );
    // The 8 rows without funds are refused; one whose earlier attempt met a 5xx may have been
    // paid by it, so it is held for an operator (needs_reconciliation), never reported failed.
    const counts = status.body.counts as Record<string, number>;
    expect(counts.succeeded).toBe(192);
    expect((counts.failed ?? 0) + (counts.needs_reconciliation ?? 0)).toBe(8);
    // What the batch went through shows up in the series the panels chart.
    await until(
      () => value('sum(moneyq_jobs_finished_total{account="alpha"})'),
      (v) => v === 200,
    );
    expect(await value('sum(moneyq_job_errors_total{code="insufficient_funds"})')).toBe(
      counts.failed,
    );
    expect(await value(pauses)).toBeGreaterThan(0);
    expect(await value("sum(moneyq_job_retries_total)")).toBeGreaterThan(0);
  }, 240_000);

  it("the dashboard's variables find their values", async () => {
    const p = prometheus as TestPrometheus;
    const variables = dashboard.templating.list.filter((v: { type: string }) => v.type === "query");
    expect(variables.map((v: { name: string }) => v.name).sort()).toEqual(["account", "queue"]);
    for (const v of variables) {
      const [, metric, label] = /^label_values\((\w+), (\w+)\)$/.exec(v.query.query) ?? [];
      const values = await p.get(
        `/api/v1/label/${label}/values?match[]=${encodeURIComponent(metric as string)}`,
      );
      expect(values.data, v.name).toEqual(
        expect.arrayContaining(v.name === "queue" ? ["payments-alpha"] : ["alpha", "beta"]),
      );
    }
  });

  it("every alert rule parses, loads and evaluates without error", async () => {
    const p = prometheus as TestPrometheus;
    expect(alertRules.map((r) => r.alert)).toEqual(
      expect.arrayContaining([
        "MoneyqBacklogGrowing",
        "MoneyqOldestWaitingJobTooOld",
        "MoneyqFailureRatioHigh",
        "MoneyqNeedsReconciliation",
        "MoneyqAccountPaused",
        "MoneyqSustainedRateLimitPauses",
        "MoneyqWebhookDeliveriesFailing",
        "MoneyqWebhookEndpointGone",
        "MoneyqNoWorkerProcessing",
      ]),
    );
    for (const rule of alertRules) {
      expect(await p.query(rule.expr), rule.alert).toMatchObject({ status: "success" });
    }
    const loaded = await until(
      () => p.get("/api/v1/rules"),
      (r) =>
        r.data.groups[0]?.rules.every(
          (x: { lastEvaluation: string }) => !x.lastEvaluation.startsWith("0001"),
        ),
    );
    const rules = loaded.data.groups.flatMap((g: { rules: unknown[] }) => g.rules);
    expect(rules).toHaveLength(alertRules.length);
    for (const rule of rules) expect(rule, rule.name).toMatchObject({ health: "ok" });
  });

  it("promtool accepts the alert rules and the shipped Prometheus configuration", () => {
    const promtool = installed("promtool", "prometheus");
    expect(execFileSync(promtool, ["check", "rules", ALERTS], { encoding: "utf8" })).toContain(
      `SUCCESS: ${alertRules.length} rules found`,
    );
    expect(
      execFileSync(promtool, ["check", "config", join(DEPLOY, "prometheus/prometheus.yml")], {
        encoding: "utf8",
      }),
    ).toContain("SUCCESS");
  });
});
