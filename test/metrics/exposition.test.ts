import { beforeAll, describe, expect, it } from "vitest";
import { bankCsv, until, useService } from "../helpers/service.js";

interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}
interface Exposition {
  readonly types: Map<string, string>;
  readonly samples: Sample[];
}

/** The text exposition format, as far as moneyq's metrics use it. */
function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("# HELP")) continue;
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      types.set(type[1] as string, type[2] as string);
      continue;
    }
    const sample = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample) throw new Error(`not exposition format: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (sample[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[k as string] = v as string;
    samples.push({ name: sample[1] as string, labels, value: Number(sample[3]) });
  }
  return { types, samples };
}

/** The metric a sample belongs to (histogram samples carry suffixes). */
function familyOf(name: string, types: Map<string, string>): string {
  if (types.has(name)) return name;
  const base = name.replace(/_(bucket|sum|count)$/, "");
  if (types.get(base) === "histogram") return base;
  throw new Error(`sample ${name} has no TYPE`);
}

/** moneyq's own metrics: type and label names (every series also carries `role`). */
const EXPECTED: Record<string, [string, string[]]> = {
  moneyq_jobs_finished_total: ["counter", ["queue", "account", "kind", "result"]],
  moneyq_job_errors_total: ["counter", ["account", "kind", "result", "code"]],
  moneyq_job_duration_seconds: ["histogram", ["account", "kind", "result"]],
  moneyq_job_processing_duration_seconds: ["histogram", ["account", "kind", "result"]],
  moneyq_upstream_requests_total: ["counter", ["account", "operation", "status_class"]],
  moneyq_upstream_request_duration_seconds: ["histogram", ["account", "operation"]],
  moneyq_job_retries_total: ["counter", ["account", "kind", "reason"]],
  moneyq_rate_limit_pauses_total: ["counter", ["account", "source"]],
  moneyq_rate_limit_pause_seconds_total: ["counter", ["account", "source"]],
  moneyq_rate_slots_missed_total: ["counter", ["account"]],
  moneyq_webhook_deliveries_total: ["counter", ["outcome"]],
  moneyq_account_paused: ["gauge", ["account"]],
  moneyq_needs_reconciliation_jobs: ["gauge", ["account"]],
  moneyq_queue_jobs: ["gauge", ["queue", "account", "state"]],
  moneyq_queue_oldest_waiting_age_seconds: ["gauge", ["queue", "account"]],
  moneyq_results_stream_length: ["gauge", []],
  moneyq_webhook_endpoint_stopped: ["gauge", []],
  moneyq_redis_up: ["gauge", []],
  moneyq_process_cpu_seconds_total: ["counter", []],
  moneyq_nodejs_eventloop_lag_p99_seconds: ["gauge", []],
};

// Rows refused for want of funds end failed (their error code counted), holding no lane.
const h = useService({ MONEYQ_METRICS_CACHE_MS: "0", MONEYQ_INSUFFICIENT_FUNDS: "fail" });
// One request in five answered 5xx, so retries are recorded too.
beforeAll(async () => {
  await h.sb.control("PUT", "/accounts/acct_alpha/faults", { body: { errorRate: 0.2, seed: 3 } });
});

async function scrape(): Promise<Exposition> {
  const res = await h.api("GET", "/metrics", { token: null });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/plain; version=0.0.4");
  return parseExposition(res.text);
}

/** A batch of `rows` bank payouts, one in ten refused by the sandbox for funds; waits for it. */
async function runBatch(prefix: string, rows: number): Promise<string> {
  const csv = bankCsv(prefix, rows, (n, cells) => {
    if (n % 10 === 0) cells.accountNumber = "0000000004";
  });
  const submitted = await h.api("POST", "/v1/batches?kind=payout.bank", { csv });
  expect(submitted.status).toBe(202);
  await until(
    () => h.api("GET", `/v1/batches/${submitted.body.batchId}`),
    (s) => s.body.state === "completed_with_failures",
    60_000,
  );
  return submitted.body.batchId;
}

/** Series of moneyq's own pipeline and Redis metrics (process metrics vary by themselves). */
/** moneyq's own series, one string each; the values of the labels in `blank` read "*". */
function seriesOf(e: Exposition, blank: readonly string[] = []): string[] {
  return e.samples
    .filter((s) => !/^moneyq_(process|nodejs)_/.test(s.name))
    .map((s) => {
      const labels = Object.entries(s.labels).map(([k, v]) => [k, blank.includes(k) ? "*" : v]);
      return `${s.name}${JSON.stringify(labels.sort())}`;
    })
    .sort();
}

describe("GET /metrics", () => {
  it("names, types, units and label sets follow Prometheus conventions", async () => {
    const batchId = await runBatch("expo-a", 30);
    const { types, samples } = await scrape();
    for (const [name, type] of types) {
      expect(name, name).toMatch(/^moneyq_[a-z0-9_]+$/);
      expect(type, name).not.toBe("summary");
      if (type === "counter") expect(name).toMatch(/_total$/);
      if (type === "histogram") expect(name).toMatch(/_seconds$/);
      expect(name, "base units").not.toMatch(/_(ms|milliseconds|minutes|kilobytes)(_|$)/);
    }
    for (const [name, [type, labels]] of Object.entries(EXPECTED)) {
      expect(types.get(name), name).toBe(type);
      const own = samples.filter((s) => familyOf(s.name, types) === name);
      expect(own.length, `${name} has samples`).toBeGreaterThan(0);
      for (const s of own) {
        const names = Object.keys(s.labels).filter((l) => l !== "le" && l !== "role");
        expect(names.sort(), name).toEqual([...labels].sort());
        expect(s.labels.role).toBe("all");
      }
    }
    const values = (name: string, label: string) =>
      new Set(samples.filter((s) => s.name === name).map((s) => s.labels[label]));
    // A refused row whose earlier attempt met a 5xx may have been paid by that attempt: it is
    // held for an operator (needs_reconciliation, outcome_unknown), never reported failed.
    const results = values("moneyq_jobs_finished_total", "result");
    expect(results).toContain("succeeded");
    expect(results).toContain("failed");
    expect(
      [...results].filter(
        (r) => !["succeeded", "failed", "needs_reconciliation"].includes(r as string),
      ),
    ).toEqual([]);
    const codes = values("moneyq_job_errors_total", "code");
    expect(codes).toContain("insufficient_funds");
    expect([...codes].filter((c) => c !== "insufficient_funds" && c !== "outcome_unknown")).toEqual(
      [],
    );
    expect(values("moneyq_queue_jobs", "queue")).toEqual(
      new Set(["payments-alpha", "payments-beta"]),
    );
    // Seconds, not milliseconds: 30 jobs that took seconds at most.
    const sum = samples.find(
      (s) => s.name === "moneyq_job_duration_seconds_sum" && s.labels.result === "succeeded",
    );
    const count = samples.find(
      (s) => s.name === "moneyq_job_duration_seconds_count" && s.labels.result === "succeeded",
    );
    expect(count?.value).toBe(27);
    expect((sum?.value ?? Number.NaN) / 27).toBeLessThan(30);
    // No label carries an id, a key, a reference or an account number.
    const labelValues = samples.flatMap((s) => Object.values(s.labels));
    for (const v of labelValues) {
      expect(v).not.toContain(batchId);
      expect(v).not.toMatch(/expo-|0123456789|0000000004/);
      expect(v.length).toBeLessThanOrEqual(64);
    }
  }, 90_000);

  it("the set of series does not grow with the number of jobs", async () => {
    // Outcome labels take a few fixed values, and the second batch may meet one the first did
    // not (a 5xx answer, say); what must not grow is everything else.
    const OUTCOME_LABELS = [
      "reason",
      "result",
      "code",
      "status_class",
      "source",
      "outcome",
      "state",
    ];
    const shapes = (e: Exposition) => [...new Set(seriesOf(e, OUTCOME_LABELS))];
    const before = await scrape();
    await runBatch("expo-b", 120);
    const after = await scrape();
    expect(shapes(after)).toEqual(shapes(before));
    // New series are allowed only where an outcome label takes a value the first batch did not
    // meet (each such value brings its histogram buckets); at most 3 others.
    const valuesOf = (e: Exposition) =>
      new Set(
        e.samples.flatMap((s) =>
          OUTCOME_LABELS.filter((l) => s.labels[l] !== undefined).map((l) => `${l}=${s.labels[l]}`),
        ),
      );
    const metBefore = valuesOf(before);
    const known = new Set(seriesOf(before));
    const grown = after.samples.filter(
      (s) =>
        !/^moneyq_(process|nodejs)_/.test(s.name) &&
        !known.has(seriesOf({ ...after, samples: [s] })[0] as string),
    );
    const unexplained = grown.filter((s) =>
      OUTCOME_LABELS.every(
        (l) => s.labels[l] === undefined || metBefore.has(`${l}=${s.labels[l]}`),
      ),
    );
    expect(unexplained.length).toBeLessThanOrEqual(3);
    expect(seriesOf(before).length).toBeGreaterThan(50);
  }, 90_000);
});
