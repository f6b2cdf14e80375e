import type { Queue } from "bullmq";
import { Gauge, type Registry } from "prom-client";
import type { AccountPauses } from "../queues/account-pauses.js";
import { LANE_PRIORITY } from "../queues/lanes.js";
import { bullKeys, JOB_FIELDS, priorityScoreRange } from "../redis/bullmq-internals.js";
import type { RedisConnection } from "../redis/connection.js";
import { backlogKey, keyspace, webhookEndpointKey } from "../redis/keys.js";
import { ATTENTION_ACCOUNTS, MetricAccounts, OTHER_ACCOUNTS } from "./metric-accounts.js";

export interface RedisMetricsOptions {
  readonly connection: RedisConnection;
  readonly prefix: string;
  /** Each configured account's queue, by alias. */
  readonly queues: ReadonlyMap<string, Queue>;
  /** Which accounts have series of their own; default: every account. */
  readonly accounts?: MetricAccounts;
  readonly pauses: AccountPauses;
  /** The results streams (one, or one per account on a cluster); their lengths are summed. */
  readonly resultsStreams: readonly string[];
  /** How long one reading serves scrapes (config.metrics.cacheMs); 0 reads at every scrape. */
  readonly cacheMs: number;
  /** A reading that takes longer counts as Redis not answering, so a scrape never hangs. Default 1000. */
  readonly timeoutMs?: number;
  /** Defaults to Date.now; the age of the oldest waiting job is measured against it. */
  readonly now?: () => number;
}

interface QueueReading {
  readonly queue: string;
  readonly account: string;
  readonly counts: Readonly<Record<string, number>>;
  readonly oldestWaitingAgeSeconds: number;
  readonly backlog: number;
  readonly paused: boolean;
}

interface Reading {
  readonly queues: readonly QueueReading[];
  readonly streamLength: number;
  readonly webhooksStopped: boolean;
}

/**
 * Gauges read from Redis when Prometheus scrapes, so every process reports the same shared
 * state (queue depth, the oldest waiting job, paused accounts, the reconciliation backlog,
 * the results stream) and nothing is kept in step by events. One reading serves every gauge
 * and every scrape within `cacheMs`: a handful of commands per account, however many
 * processes and gauges there are. When Redis does not answer in time, `moneyq_redis_up` is
 * 0 and the other gauges are left out rather than stale. Accounts without series of their own
 * are counted under "_other", but those that need attention (paused, waiting longest, with a
 * reconciliation backlog) are shown on their own in that gauge (`attention`).
 */
export function registerRedisMetrics(registry: Registry, options: RedisMetricsOptions): void {
  const now = options.now ?? Date.now;
  const accounts = options.accounts ?? MetricAccounts.all([...options.queues.keys()]);
  let cached: { at: number; reading: Promise<Reading | undefined> } | undefined;
  const reading = () => {
    const at = now();
    if (cached === undefined || at - cached.at >= options.cacheMs) {
      cached = { at, reading: withTimeout(read(options, at), options.timeoutMs ?? 1_000) };
    }
    return cached.reading;
  };
  const registers = [registry];

  new Gauge({
    name: "moneyq_redis_up",
    help: "1 when the last reading of Redis for these metrics succeeded, else 0.",
    registers,
    async collect() {
      this.set((await reading()) ? 1 : 0);
    },
  });
  new Gauge({
    name: "moneyq_queue_jobs",
    help: "Jobs in each account's queue by BullMQ state.",
    labelNames: ["queue", "account", "state"],
    registers,
    async collect() {
      this.reset();
      for (const q of aggregated((await reading())?.queues ?? [], accounts)) {
        for (const [state, count] of Object.entries(q.counts)) {
          this.set({ queue: q.queue, account: q.account, state }, count);
        }
      }
    },
  });
  new Gauge({
    name: "moneyq_queue_oldest_waiting_age_seconds",
    help: "Age of the oldest job waiting to be taken (0 when none waits).",
    labelNames: ["queue", "account"],
    registers,
    async collect() {
      this.reset();
      const queues = (await reading())?.queues ?? [];
      for (const s of attention(queues, accounts, (q) => q.oldestWaitingAgeSeconds, Math.max))
        this.set({ queue: s.queue, account: s.account }, s.value);
    },
  });
  new Gauge({
    name: "moneyq_account_paused",
    help: "1 while an account's queue is paused (the provider refused its key, or an operator paused it).",
    labelNames: ["account"],
    registers,
    async collect() {
      this.reset();
      const queues = (await reading())?.queues ?? [];
      for (const s of attention(queues, accounts, (q) => (q.paused ? 1 : 0), Math.max))
        this.set({ account: s.account }, s.value);
    },
  });
  new Gauge({
    name: "moneyq_needs_reconciliation_jobs",
    help: "Jobs whose terminal result is needs_reconciliation and which were not replayed since.",
    labelNames: ["account"],
    registers,
    async collect() {
      this.reset();
      const queues = (await reading())?.queues ?? [];
      for (const s of attention(
        queues,
        accounts,
        (q) => q.backlog,
        (a, b) => a + b,
      ))
        this.set({ account: s.account }, s.value);
    },
  });
  new Gauge({
    name: "moneyq_webhook_endpoint_stopped",
    help: "1 while webhook deliveries are stopped because the receiver answered 410 Gone (moneyq webhooks resume).",
    registers,
    async collect() {
      this.reset();
      const r = await reading();
      if (r) this.set(r.webhooksStopped ? 1 : 0);
    },
  });
  new Gauge({
    name: "moneyq_results_stream_length",
    help: "Entries in the results stream (trimmed near MONEYQ_RESULTS_MAXLEN).",
    registers,
    async collect() {
      this.reset();
      const r = await reading();
      if (r) this.set(r.streamLength);
    },
  });
}

async function read(options: RedisMetricsOptions, at: number): Promise<Reading> {
  const { connection, prefix, queues } = options;
  const space = keyspace(prefix, connection.isCluster);
  const [pauses, streamLength, webhooksStopped, perQueue] = await Promise.all([
    options.pauses.list(),
    Promise.all(options.resultsStreams.map((stream) => connection.xlen(stream))).then((lengths) =>
      lengths.reduce((sum, n) => sum + n, 0),
    ),
    connection.exists(webhookEndpointKey(prefix)),
    Promise.all(
      [...queues].map(async ([account, queue]) => {
        const [all, since, backlog] = await Promise.all([
          queue.getJobCounts(),
          oldestWaitingSince(connection, queue),
          connection.zcard(backlogKey(space, account)),
        ]);
        // A job waiting in a lane (a BullMQ priority) waits all the same.
        const { prioritized = 0, ...counts } = all;
        counts.waiting = (counts.waiting ?? 0) + prioritized;
        return { account, queue: queue.name, counts, since, backlog };
      }),
    ),
  ]);
  const pausedAccounts = new Set(pauses.map((p) => p.account));
  return {
    streamLength,
    webhooksStopped: webhooksStopped === 1,
    queues: perQueue.map((q) => ({
      queue: q.queue,
      account: q.account,
      counts: q.counts,
      oldestWaitingAgeSeconds: q.since === undefined ? 0 : Math.max(0, (at - q.since) / 1000),
      backlog: q.backlog,
      paused: pausedAccounts.has(q.account),
    })),
  };
}

/**
 * When the longest-waiting job was enqueued: the oldest of the wait list's head and of each
 * lane's head (a lane keeps its jobs in enqueue order).
 */
async function oldestWaitingSince(
  connection: RedisConnection,
  queue: Queue,
): Promise<number | undefined> {
  const prioritized = bullKeys.prioritized(queue.qualifiedName);
  const [listed, ...heads] = await Promise.all([
    // Ascending: the job that has waited longest comes first.
    queue.getJobs(["waiting"], 0, 0, true),
    ...Object.values(LANE_PRIORITY).map((p) =>
      connection.zrangebyscore(prioritized, ...priorityScoreRange(p), "LIMIT", 0, 1),
    ),
  ]);
  const stamps = await Promise.all(
    heads
      .flat()
      .map((id) => connection.hget(bullKeys.job(queue.qualifiedName, id), JOB_FIELDS.timestamp)),
  );
  const all = [listed[0]?.timestamp, ...stamps.map((t) => (t === null ? undefined : Number(t)))];
  const known = all.filter((t): t is number => t !== undefined && Number.isFinite(t));
  return known.length === 0 ? undefined : Math.min(...known);
}

/** Each named account's counts, and the other accounts' summed under "_other". */
function aggregated(
  queues: readonly QueueReading[],
  accounts: MetricAccounts,
): ReadonlyArray<Pick<QueueReading, "queue" | "account" | "counts">> {
  const named = queues.filter((q) => accounts.isNamed(q.account));
  const others = queues.filter((q) => !accounts.isNamed(q.account));
  if (others.length === 0) return named;
  const counts: Record<string, number> = {};
  for (const q of others)
    for (const [state, n] of Object.entries(q.counts)) counts[state] = (counts[state] ?? 0) + n;
  return [...named, { queue: OTHER_ACCOUNTS, account: OTHER_ACCOUNTS, counts }];
}

/**
 * One gauge's series: each named account's value; of the others, the `ATTENTION_ACCOUNTS`
 * with the highest values above 0 on their own (the accounts an operator must look at), and
 * the rest folded into one "_other" series, so that neither a sum nor a maximum across the
 * account label counts an account twice.
 */
function attention(
  queues: readonly QueueReading[],
  accounts: MetricAccounts,
  value: (q: QueueReading) => number,
  fold: (a: number, b: number) => number,
): Array<{ readonly queue: string; readonly account: string; readonly value: number }> {
  const series = (q: QueueReading) => ({ queue: q.queue, account: q.account, value: value(q) });
  const named = queues.filter((q) => accounts.isNamed(q.account)).map(series);
  const others = queues.filter((q) => !accounts.isNamed(q.account)).map(series);
  if (others.length === 0) return named;
  others.sort((a, b) => b.value - a.value);
  const shown = others.slice(0, ATTENTION_ACCOUNTS).filter((s) => s.value > 0);
  const rest = others.slice(shown.length).map((s) => s.value);
  const other = {
    queue: OTHER_ACCOUNTS,
    account: OTHER_ACCOUNTS,
    value: rest.reduce((a, b) => fold(a, b), 0),
  };
  return [...named, ...shown, ...(rest.length > 0 ? [other] : [])];
}

/** The reading, or undefined if it fails or takes longer than `ms`. */
function withTimeout(reading: Promise<Reading>, ms: number): Promise<Reading | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([reading.catch(() => undefined), late]).finally(() => clearTimeout(timer));
}
