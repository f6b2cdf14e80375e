import { Counter, Gauge, Histogram, type Registry } from "prom-client";

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const JOB_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

/**
 * What the pipeline records. Labels are bounded: queue, kind, result, operation, status
 * class, reason, and account alias (a configured, bounded set); never ids or keys.
 */
export interface PipelineMetrics {
  readonly jobsFinished: Counter<"account" | "kind" | "result">;
  readonly jobDuration: Histogram<"account" | "kind" | "result">;
  readonly jobProcessingDuration: Histogram<"account" | "kind" | "result">;
  readonly upstreamRequests: Counter<"account" | "operation" | "status_class">;
  readonly upstreamDuration: Histogram<"account" | "operation">;
  readonly retries: Counter<"account" | "kind" | "reason">;
  readonly rateLimitPauses: Counter<"account" | "source">;
  readonly rateLimitPauseSeconds: Counter<"account" | "source">;
  readonly accountsPaused: Gauge<"account">;
  readonly webhookDeliveries: Counter<"outcome">;
}

export function createPipelineMetrics(registry: Registry): PipelineMetrics {
  const registers = [registry];
  return {
    jobsFinished: new Counter({
      name: "moneyq_jobs_finished_total",
      help: "Jobs that reached their terminal result.",
      labelNames: ["account", "kind", "result"],
      registers,
    }),
    jobDuration: new Histogram({
      name: "moneyq_job_duration_seconds",
      help: "Time from enqueue to terminal result.",
      labelNames: ["account", "kind", "result"],
      buckets: JOB_BUCKETS,
      registers,
    }),
    jobProcessingDuration: new Histogram({
      name: "moneyq_job_processing_duration_seconds",
      help: "Time from the first start of processing to terminal result.",
      labelNames: ["account", "kind", "result"],
      buckets: JOB_BUCKETS,
      registers,
    }),
    upstreamRequests: new Counter({
      name: "moneyq_upstream_requests_total",
      help: "Requests to the Payments API by operation and status class (2xx, 4xx, 5xx, or error when no answer arrived).",
      labelNames: ["account", "operation", "status_class"],
      registers,
    }),
    upstreamDuration: new Histogram({
      name: "moneyq_upstream_request_duration_seconds",
      help: "Duration of requests to the Payments API.",
      labelNames: ["account", "operation"],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    retries: new Counter({
      name: "moneyq_job_retries_total",
      help: "Attempts that will be retried, by reason.",
      labelNames: ["account", "kind", "reason"],
      registers,
    }),
    rateLimitPauses: new Counter({
      name: "moneyq_rate_limit_pauses_total",
      help: "Pauses of an account's processing: source is upstream (a 429) or local (the account's own limit).",
      labelNames: ["account", "source"],
      registers,
    }),
    rateLimitPauseSeconds: new Counter({
      name: "moneyq_rate_limit_pause_seconds_total",
      help: "Total seconds of those pauses.",
      labelNames: ["account", "source"],
      registers,
    }),
    accountsPaused: new Gauge({
      name: "moneyq_account_paused",
      help: "1 while an account's queue is paused because the provider refused its key.",
      labelNames: ["account"],
      registers,
    }),
    webhookDeliveries: new Counter({
      name: "moneyq_webhook_deliveries_total",
      help: "Webhook delivery attempts: delivered, retry (will try again), failed (gave up) or blocked (address refused).",
      labelNames: ["outcome"],
      registers,
    }),
  };
}
