import { Counter, Histogram, type LabelValues, type Registry } from "prom-client";
import { type MetricAccounts, OTHER_ACCOUNTS } from "./metric-accounts.js";

export const RATE_LIMIT_SOURCES = ["upstream", "local"] as const;
export const WEBHOOK_OUTCOMES = ["delivered", "retry", "failed", "blocked", "gone"] as const;
export const REVERSAL_SOURCES = ["recheck", "sweep"] as const;
export const RECHECK_OUTCOMES = ["unchanged", "reversed", "error"] as const;

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const JOB_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

/**
 * What the pipeline records. Labels are bounded: queue, kind, result, code (moneyq's stable
 * error codes), operation, status class, reason, and account alias (a named account's, or
 * "_other" for the rest: metric-accounts.ts); never ids, keys or amounts. Readings of Redis (queue depth, backlog, paused
 * accounts) are collected at scrape time instead (redis-metrics.ts).
 */
export interface PipelineMetrics {
  readonly jobsFinished: Counter<"queue" | "account" | "kind" | "result">;
  readonly jobErrors: Counter<"account" | "kind" | "result" | "code">;
  readonly jobDuration: Histogram<"account" | "kind" | "result">;
  readonly jobProcessingDuration: Histogram<"account" | "kind" | "result">;
  readonly upstreamRequests: Counter<"account" | "operation" | "status_class">;
  readonly upstreamDuration: Histogram<"account" | "operation">;
  readonly retries: Counter<"account" | "kind" | "reason">;
  readonly rateLimitPauses: Counter<"account" | "source">;
  readonly rateLimitPauseSeconds: Counter<"account" | "source">;
  readonly rateSlotsMissed: Counter<"account">;
  readonly webhookDeliveries: Counter<"outcome">;
  readonly reversals: Counter<"account" | "found_by">;
  readonly rechecks: Counter<"account" | "outcome">;
  readonly sweepErrors: Counter<"account">;
  readonly outflowHolds: Counter<"account" | "currency" | "cause">;
  readonly outflowHoldsBegun: Counter<"account" | "currency" | "cause">;
}

/**
 * Defines the pipeline's metrics on `registry`. The pause and webhook counters of every
 * account label start at zero, so a dashboard shows 0 rather than no data.
 */
export function createPipelineMetrics(
  registry: Registry,
  accounts: MetricAccounts,
): PipelineMetrics {
  const registers = [registry];
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    relabelCounter(new Counter({ name, help, labelNames, registers }), accounts);
  const histogram = <L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    buckets: number[],
  ) => relabelHistogram(new Histogram({ name, help, labelNames, buckets, registers }), accounts);
  const metrics: PipelineMetrics = {
    jobsFinished: counter(
      "moneyq_jobs_finished_total",
      "Jobs that reached their terminal result; queue is the account's queue.",
      ["queue", "account", "kind", "result"],
    ),
    jobErrors: counter(
      "moneyq_job_errors_total",
      "Terminal results other than succeeded, by moneyq's stable error code.",
      ["account", "kind", "result", "code"],
    ),
    jobDuration: histogram(
      "moneyq_job_duration_seconds",
      "Time from enqueue to terminal result.",
      ["account", "kind", "result"],
      JOB_BUCKETS,
    ),
    jobProcessingDuration: histogram(
      "moneyq_job_processing_duration_seconds",
      "Time from the first start of processing to terminal result.",
      ["account", "kind", "result"],
      JOB_BUCKETS,
    ),
    upstreamRequests: counter(
      "moneyq_upstream_requests_total",
      "Requests to the Payments API by operation and status class (2xx, 4xx, 5xx, or error when no answer arrived).",
      ["account", "operation", "status_class"],
    ),
    upstreamDuration: histogram(
      "moneyq_upstream_request_duration_seconds",
      "Duration of requests to the Payments API.",
      ["account", "operation"],
      LATENCY_BUCKETS,
    ),
    retries: counter("moneyq_job_retries_total", "Attempts that will be retried, by reason.", [
      "account",
      "kind",
      "reason",
    ]),
    rateLimitPauses: counter(
      "moneyq_rate_limit_pauses_total",
      "Pauses of an account's processing: source is upstream (a 429) or local (the account's own limit).",
      ["account", "source"],
    ),
    rateLimitPauseSeconds: counter(
      "moneyq_rate_limit_pause_seconds_total",
      "Total seconds of those pauses.",
      ["account", "source"],
    ),
    rateSlotsMissed: counter(
      "moneyq_rate_slots_missed_total",
      "Slots of an account's rate given up because the worker woke up too late to use them (an overloaded host).",
      ["account"],
    ),
    webhookDeliveries: counter(
      "moneyq_webhook_deliveries_total",
      "Webhook delivery attempts: delivered, retry (will try again), failed (gave up) or blocked (address refused).",
      ["outcome"],
    ),
    reversals: counter(
      "moneyq_reversals_total",
      "Succeeded payouts the provider later reversed or returned, recorded once each: found_by recheck (a lookup after success) or sweep (the reconciliation sweep).",
      ["account", "found_by"],
    ),
    rechecks: counter(
      "moneyq_rechecks_total",
      "Lookups of succeeded payouts after their success: unchanged, reversed, or error (looked up again later).",
      ["account", "outcome"],
    ),
    outflowHolds: counter(
      "moneyq_outflow_held_total",
      "Payout requests held before they were sent: cause velocity (a velocity limit) or insufficient_funds (their currency's lane is held).",
      ["account", "currency", "cause"],
    ),
    outflowHoldsBegun: counter(
      "moneyq_outflow_holds_total",
      "Holds of an account's currency lane that began: cause velocity or insufficient_funds.",
      ["account", "currency", "cause"],
    ),
    sweepErrors: counter(
      "moneyq_reconciliation_sweep_errors_total",
      "Reconciliation sweeps of the service that did not finish (the next one resumes them).",
      ["account"],
    ),
  };
  startAtZero(metrics, accounts);
  return metrics;
}

/** The pause, reversal, sweep and webhook counters of every account label, at zero. */
function startAtZero(metrics: PipelineMetrics, accounts: MetricAccounts): void {
  for (const account of accounts.labels()) {
    metrics.rateSlotsMissed.inc({ account }, 0);
    for (const found_by of REVERSAL_SOURCES) metrics.reversals.inc({ account, found_by }, 0);
    metrics.sweepErrors.inc({ account }, 0);
    for (const source of RATE_LIMIT_SOURCES) {
      metrics.rateLimitPauses.inc({ account, source }, 0);
      metrics.rateLimitPauseSeconds.inc({ account, source }, 0);
    }
  }
  for (const outcome of WEBHOOK_OUTCOMES) metrics.webhookDeliveries.inc({ outcome }, 0);
}

/** The labels with the account's series label in place of its alias (and of its queue's name). */
function relabel<L extends string>(labels: LabelValues<L>, accounts: MetricAccounts) {
  const { account } = labels as { account?: string | number };
  if (account === undefined || accounts.isNamed(String(account))) return labels;
  // The account's queue is as telling as its alias.
  const queue = "queue" in labels ? { queue: OTHER_ACCOUNTS } : {};
  return { ...labels, account: OTHER_ACCOUNTS, ...queue };
}

/** A counter whose increments count under the account's series label. */
function relabelCounter<L extends string>(metric: Counter<L>, accounts: MetricAccounts) {
  const inc = metric.inc.bind(metric) as (labels: LabelValues<L>, value?: number) => void;
  metric.inc = ((labels: LabelValues<L>, value?: number) =>
    inc(relabel(labels, accounts), value)) as Counter<L>["inc"];
  return metric;
}

/** A histogram whose observations count under the account's series label. */
function relabelHistogram<L extends string>(metric: Histogram<L>, accounts: MetricAccounts) {
  const observe = metric.observe.bind(metric) as (labels: LabelValues<L>, value: number) => void;
  metric.observe = ((labels: LabelValues<L>, value: number) =>
    observe(relabel(labels, accounts), value)) as Histogram<L>["observe"];
  return metric;
}
