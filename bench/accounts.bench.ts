// Many accounts on one and on two worker processes (`moneyq start`, accounts from a file), the
// sandbox in its own process and a Redis of this run's own, all on this machine: ready time,
// idle Redis commands/s and CPU, /metrics size, then ROWS payouts per account (each a POST and
// a confirming lookup): provider requests/s against the accounts' aggregate rate and against one
// account alone at an unlimited rate (this run's baseline), the longest gap between results,
// rate slots missed, error log lines. Run: npm run bench -- accounts
// (BENCH_ACCOUNTS=1,100,1000,5000 and BENCH_PROCESSES=1,2 choose the runs, BENCH_ROWS=10 the rows;
// BENCH_KILL=1 kills one of two processes once a third of the rows are done). Provider requests
// are counted at the sandbox, and every row is checked paid once (results and ledger).
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "../src/logger.js";
import type { JobInput } from "../src/queues/job-envelope.js";
import { Producer } from "../src/queues/producer.js";
import { createRedis, type RedisConnection } from "../src/redis/connection.js";
import { freePort, startPrivateRedis } from "../src/redis/private-redis.js";
import { body, firstJsonLine } from "./pipeline-run.js";

const RATE = 5;
const ROWS = Number(process.env.BENCH_ROWS ?? 10);
const KILL = process.env.BENCH_KILL === "1";
const IDLE_SECONDS = 30;
const BIN = join(import.meta.dirname, "..", "bin", "moneyq.js");
const counts = (name: string, fallback: string) =>
  (process.env[name] ?? fallback).split(",").map(Number);

interface Started {
  readonly child: ChildProcess;
  readonly url: string;
  errorLines: number;
}

/** `moneyq <args>` with `env`; its error log lines counted. */
function moneyq(args: string[], env: Record<string, string>): Started {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const started = { child, url: `http://127.0.0.1:${env.MONEYQ_API_PORT}`, errorLines: 0 };
  child.stdout?.on("data", (chunk: Buffer) => {
    started.errorLines += chunk.toString().match(/"level":(50|60)/g)?.length ?? 0;
  });
  child.stderr?.resume();
  return started;
}

interface Upstream {
  readonly child: ChildProcess;
  readonly baseUrl: string;
  readonly controlUrl: string;
  readonly apiKey: string;
}

async function sandbox(): Promise<Upstream> {
  const child = spawn(process.execPath, [BIN, "sandbox", "--port", "0", "--json"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const { baseUrl, controlUrl, apiKey } = await firstJsonLine(child);
  return {
    child,
    baseUrl: baseUrl as string,
    controlUrl: controlUrl as string,
    apiKey: apiKey as string,
  };
}

/** Requests the sandbox received, every account's. */
async function providerRequests(upstream: Upstream): Promise<number> {
  const log = (await (await fetch(`${upstream.controlUrl}/requests`)).json()) as {
    data: { requests: unknown[] };
  };
  return log.data.requests.length;
}

/**
 * Whether every row was paid once: jobs with more than one result on the stream, and
 * idempotency keys with more than one effect in the sandbox's ledger.
 */
async function paidOnce(redis: RedisConnection, upstream: Upstream) {
  const perJob = new Map<string, number>();
  for (const [, fields] of await redis.xrange("moneyq:results", "-", "+")) {
    const jobId = (JSON.parse(fields[1] as string) as { jobId: string }).jobId;
    perJob.set(jobId, (perJob.get(jobId) ?? 0) + 1);
  }
  const ledger = (await (await fetch(`${upstream.controlUrl}/ledger`)).json()) as {
    data: { entries: { idempotencyKey: string | null; effectId: string | null }[] };
  };
  const effects = new Map<string, Set<string>>();
  for (const e of ledger.data.entries) {
    if (e.idempotencyKey === null || e.effectId === null) continue;
    effects.set(e.idempotencyKey, (effects.get(e.idempotencyKey) ?? new Set()).add(e.effectId));
  }
  return {
    jobsWithResults: perJob.size,
    resultsRepeated: [...perJob.values()].filter((n) => n > 1).length,
    keysPaidTwice: [...effects.values()].filter((set) => set.size > 1).length,
  };
}

async function untilReady(url: string): Promise<void> {
  for (;;) {
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** CPU seconds a process has used (user and system), from /proc. */
function cpuSeconds(pid: number | undefined): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Clients connected to Redis now, this benchmark's own among them. */
async function clientsConnected(redis: RedisConnection): Promise<number> {
  return Number(/connected_clients:(\d+)/.exec(await redis.info("clients"))?.[1]);
}

async function commandsProcessed(redis: RedisConnection): Promise<number> {
  return Number(/total_commands_processed:(\d+)/.exec(await redis.info("stats"))?.[1]);
}

async function scraped(url: string) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const sum = (name: string) =>
    text
      .split("\n")
      .filter((l) => l.startsWith(name))
      .reduce((s, l) => s + Number(l.split(" ").at(-1)), 0);
  return {
    bytes: text.length,
    requests: sum("moneyq_upstream_requests_total"),
    missed: sum("moneyq_rate_slots_missed_total"),
  };
}

/** A run with no new result for this long, or not done after the bound, is reported as it stands. */
const STALL_MS = 60_000;
const RUN_BOUND_MS = 600_000;

/**
 * Results on the stream until `total`, until none came for STALL_MS, or until RUN_BOUND_MS:
 * how many, how long, and the longest gap without a new one after the first.
 */
async function untilDone(
  redis: RedisConnection,
  total: number,
  atThird?: () => void,
): Promise<{ done: number; seconds: number; longestGapS: number }> {
  const started = performance.now();
  let third = atThird;
  let [last, lastAt, longestGap] = [0, performance.now(), 0];
  const going = () =>
    performance.now() - lastAt < STALL_MS && performance.now() - started < RUN_BOUND_MS;
  while (last < total && going()) {
    await new Promise((r) => setTimeout(r, 250));
    const now = await redis.xlen("moneyq:results");
    if (now > last) {
      if (last > 0) longestGap = Math.max(longestGap, performance.now() - lastAt);
      [last, lastAt] = [now, performance.now()];
    }
    if (third && last >= total / 3) {
      third();
      third = undefined;
    }
  }
  const longest = Math.max(longestGap, last < total ? performance.now() - lastAt : 0);
  return { done: last, seconds: (performance.now() - started) / 1000, longestGapS: longest / 1000 };
}

/** One run: `accounts` accounts at `rate` each on `processes` worker processes. */
async function run(accounts: number, processes: number, rate: number, rows: number) {
  const redisServer = await startPrivateRedis("redis-server", ["--maxclients", "30000"]);
  const upstream = await sandbox();
  const dir = await mkdtemp(join(tmpdir(), "moneyq-accounts-"));
  const aliases = Array.from({ length: accounts }, (_, i) => `a${i}`);
  const file = join(dir, "accounts.json");
  const list = aliases.map((alias) => ({ alias, apiKey: upstream.apiKey, ratePerSecond: rate }));
  await writeFile(file, JSON.stringify(list));
  const redis = createRedis(redisServer.url, createLogger("warn"), "bench");
  const env = {
    PAYMENTS_API_URL: upstream.baseUrl,
    REDIS_URL: redisServer.url,
    MONEYQ_ACCOUNTS_FILE: file,
    MONEYQ_LOG_LEVEL: "warn",
  };
  const begun = performance.now();
  const workers: Started[] = [];
  for (let i = 0; i < processes; i += 1)
    workers.push(moneyq(["start"], { ...env, MONEYQ_API_PORT: String(await freePort()) }));
  await Promise.all(workers.map((w) => untilReady(w.url)));
  const readyS = (performance.now() - begun) / 1000;
  await new Promise((r) => setTimeout(r, 5_000));
  const [c0, cpu0] = [await commandsProcessed(redis), workers.map((w) => cpuSeconds(w.child.pid))];
  await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
  const idleCommands = ((await commandsProcessed(redis)) - c0) / IDLE_SECONDS;
  const idleClients = await clientsConnected(redis);
  const idleCpu =
    workers.reduce((s, w, i) => s + cpuSeconds(w.child.pid) - (cpu0[i] as number), 0) /
    IDLE_SECONDS;

  const producer = new Producer({
    connection: redis,
    prefix: "moneyq",
    accounts: aliases,
    maxAttempts: 8,
    retentionMs: 600_000,
  });
  const inputs = (account: string): JobInput[] =>
    Array.from({ length: rows }, (_, i) => ({
      kind: "payout.bank",
      account,
      batchId: "bench",
      reference: `r${i}`,
      request: { body },
    }));
  let busyClients = 0;
  const sampling = setInterval(() => {
    clientsConnected(redis).then(
      (n) => {
        busyClients = Math.max(busyClients, n);
      },
      () => undefined,
    );
  }, 1_000);
  for (const account of aliases) await producer.enqueueMany(inputs(account));
  // BENCH_KILL: one of two processes killed once a third of the rows are done.
  const killed = KILL && processes > 1 ? workers[0] : undefined;
  const done = await untilDone(redis, accounts * rows, () => killed?.child.kill("SIGKILL"));
  clearInterval(sampling);
  const live = workers.filter((w) => w !== killed);
  const metrics = await Promise.all(live.map((w) => scraped(w.url)));
  const requests = await providerRequests(upstream);
  const paid = await paidOnce(redis, upstream);

  for (const w of workers) w.child.kill("SIGTERM");
  upstream.child.kill("SIGTERM");
  await Promise.all(
    [...workers.map((w) => w.child), upstream.child].map(
      // A process killed mid-run has ended already: its signal is set, not its exit code.
      (c) =>
        new Promise((r) =>
          c.exitCode === null && c.signalCode === null ? c.once("exit", r) : r(undefined),
        ),
    ),
  );
  await producer.close();
  redis.disconnect();
  await redisServer.stop();
  await rm(dir, { recursive: true, force: true });
  return {
    accounts,
    processes,
    readyS,
    idleCommandsPerS: Math.round(idleCommands),
    idleCpuPercent: Math.round(idleCpu * 100),
    idleClients,
    busyClients,
    metricsKB: Math.round((metrics[0]?.bytes ?? 0) / 1000),
    done: done.done,
    seconds: done.seconds,
    longestGapS: done.longestGapS,
    requestsPerS: requests / done.seconds,
    slotsMissed: metrics.reduce((s, m) => s + m.missed, 0),
    ...paid,
    errorLines: workers.reduce((s, w) => s + w.errorLines, 0),
  };
}

const baseline = await run(1, 1, 100_000, 2_000);
console.log(
  `one account alone at an unlimited rate: ${baseline.requestsPerS.toFixed(0)} requests/s (2,000 rows)`,
);
console.log(
  "| accounts | processes | ready s | idle Redis cmd/s | idle CPU % | Redis clients idle / busy | /metrics kB | rows done | in s | longest gap s | requests/s | of aggregate rate | of one account alone | slots missed | error lines | rows with a result | results repeated | keys paid twice |",
);
console.log(
  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
);
for (const accounts of counts("BENCH_ACCOUNTS", "1,100,1000,5000")) {
  for (const processes of counts("BENCH_PROCESSES", "1,2")) {
    const r = await run(accounts, processes, RATE, ROWS);
    const aggregate = r.requestsPerS / (accounts * RATE);
    console.log(
      `| ${accounts} | ${processes} | ${r.readyS.toFixed(1)} | ${r.idleCommandsPerS} | ${r.idleCpuPercent} | ${r.idleClients} / ${r.busyClients} | ${r.metricsKB} | ${r.done} of ${accounts * ROWS} | ${r.seconds.toFixed(1)} | ${r.longestGapS.toFixed(1)} | ${r.requestsPerS.toFixed(0)} | ${aggregate.toFixed(2)} | ${(r.requestsPerS / baseline.requestsPerS).toFixed(2)} | ${r.slotsMissed} | ${r.errorLines} | ${r.jobsWithResults} | ${r.resultsRepeated} | ${r.keysPaidTwice} |`,
    );
  }
}
