import { afterAll, beforeAll } from "vitest";
import { type Config, loadConfig } from "../../src/config/load-config.js";
import { createLogger } from "../../src/logger.js";
import type { RedisConnection } from "../../src/redis/connection.js";
import { type Keyspace, resultsStreamKey } from "../../src/redis/keys.js";
import type { SandboxOptions } from "../../src/sandbox/index.js";
import { type Service, startService } from "../../src/service/start-service.js";
import { useTestRedis } from "./redis.js";
import { type TestSandbox, useSandbox } from "./sandbox.js";
import { waitFor } from "./wait-until.js";

export const ALPHA_TOKEN = "tok_alpha_0123456789abcdef";
export const BETA_TOKEN = "tok_beta_0123456789abcdef0";
export const BOTH_TOKEN = "tok_both_0123456789abcdef0";
const ALPHA_KEY = "sk_sandbox_alpha_key_000001";
const BETA_KEY = "sk_sandbox_beta_key_0000001";

export interface ServiceHarness {
  readonly sb: TestSandbox;
  service(): Service;
  config(): Config;
  env(): Record<string, string>;
  /** A connection to the service's Redis, closed after the file's tests. */
  redis(): RedisConnection;
  /** The service's keyspace (its prefix, on a cluster or a single Redis). */
  space(): Keyspace;
  /** Every entry of the results stream: of both accounts' streams on a cluster, each in order. */
  streamEntries(): Promise<[string, string[]][]>;
  /** Calls the API over its real port; `csv` sends a text/csv body. */
  api(
    method: string,
    path: string,
    options?: {
      token?: string | null;
      body?: unknown;
      csv?: string;
      headers?: Record<string, string>;
    },
    // biome-ignore lint/suspicious/noExplicitAny: tests read answers of many shapes
  ): Promise<{ status: number; body: any; text: string; headers: Headers }>;
}

/**
 * A whole service (API and workers) on real ports, over a sandbox with two accounts, `alpha`
 * (acct_alpha) and `beta` (acct_beta), and three tokens: one per account and one for both.
 */
export function useService(
  env: Record<string, string> = {},
  sandboxOptions: SandboxOptions = {},
): ServiceHarness {
  const sb = useSandbox({
    ...sandboxOptions,
    settleDelayMs: 20,
    accounts: [
      { accountId: "acct_alpha", apiKey: ALPHA_KEY },
      { accountId: "acct_beta", apiKey: BETA_KEY },
    ],
  });
  const redis = useTestRedis("api");
  let service: Service | undefined;
  let connection: RedisConnection | undefined;
  let fullEnv: Record<string, string> = {};
  beforeAll(async () => {
    fullEnv = {
      REDIS_URL: redis.url,
      PAYMENTS_API_URL: sb.sandbox.baseUrl,
      MONEYQ_ACCOUNTS: JSON.stringify([
        { alias: "alpha", apiKey: ALPHA_KEY },
        { alias: "beta", apiKey: BETA_KEY },
      ]),
      MONEYQ_API_TOKENS: JSON.stringify([
        { name: "alpha-ops", token: ALPHA_TOKEN, accounts: ["alpha"] },
        { name: "beta-ops", token: BETA_TOKEN, accounts: ["beta"] },
        { name: "both", token: BOTH_TOKEN, accounts: ["alpha", "beta"] },
      ]),
      MONEYQ_API_PORT: "0",
      MONEYQ_REDIS_PREFIX: redis.prefix,
      MONEYQ_LOG_LEVEL: "silent",
      MONEYQ_RATE_LIMIT_PER_SECOND: "2000",
      MONEYQ_CONCURRENCY: "16",
      ...env,
    };
    service = await startService({ config: loadConfig(fullEnv), logger: createLogger("silent") });
  });
  afterAll(async () => {
    await service?.close();
  });
  const running = () => {
    if (!service) throw new Error("service not started");
    return service;
  };
  return {
    sb,
    service: running,
    config: () => loadConfig(fullEnv),
    env: () => fullEnv,
    redis: () => {
      connection ??= redis.connect();
      return connection;
    },
    space: () => redis.space(fullEnv.MONEYQ_REDIS_PREFIX),
    async streamEntries() {
      const space = redis.space(fullEnv.MONEYQ_REDIS_PREFIX);
      const streams = new Set(["alpha", "beta"].map((a) => resultsStreamKey(space, a)));
      connection ??= redis.connect();
      const entries: [string, string[]][] = [];
      for (const stream of streams) entries.push(...(await connection.xrange(stream, "-", "+")));
      return entries;
    },
    async api(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      const token = options.token === undefined ? ALPHA_TOKEN : options.token;
      if (token !== null) headers.authorization = `Bearer ${token}`;
      let body: string | undefined;
      if (options.csv !== undefined) {
        headers["content-type"] ??= "text/csv";
        body = options.csv;
      } else if (options.body !== undefined) {
        headers["content-type"] ??= "application/json";
        body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
      }
      const res = await fetch(`${running().apiUrl}${path}`, {
        method,
        headers,
        ...(body !== undefined && { body }),
      });
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      return { status: res.status, body: parsed, text, headers: res.headers };
    },
  };
}

/** Polls a batch's status through the API until it has finished; answers that reading. */
export function batchFinished(h: ServiceHarness, token: string, batchId: string) {
  return until(
    () => h.api("GET", `/v1/batches/${batchId}`, { token }),
    (r) => r.body?.finishedAt !== undefined,
  );
}

/** A job's status through the API, as `token` (alpha's unless told) reads it. */
export function jobStatus(h: ServiceHarness, jobId: string, token = ALPHA_TOKEN) {
  return h.api("GET", `/v1/jobs/${jobId}`, { token });
}

/** Polls a job's status through the API until it has its result; answers that reading. */
export function jobFinished(h: ServiceHarness, jobId: string, token = ALPHA_TOKEN) {
  return until(
    () => jobStatus(h, jobId, token),
    (r) => r.body?.result !== null && r.body?.result !== undefined,
  );
}

/** How many requests with this idempotency key reached the sandbox. */
export async function sentWithKey(h: ServiceHarness, key: string): Promise<number> {
  return (await h.sb.control("GET", "/requests")).body.data.requests.filter(
    (r: { idempotencyKey?: string }) => r.idempotencyKey === key,
  ).length;
}

/** Polls `read` every 50 ms until `done` holds, for 20 s unless told; returns that reading. */
export function until<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  return waitFor(
    read,
    done,
    timeoutMs,
    (last) => `the condition (last reading: ${JSON.stringify(last)})`,
    50,
  );
}

/** A bank payout CSV: `rows` lines with references `${prefix}-N`; `patch` edits lines. */
export function bankCsv(
  prefix: string,
  rows: number,
  patch: (n: number, cells: Record<string, string>) => void = () => undefined,
): string {
  const header = "reference,amount,currency,bankCode,accountNumber,accountName,bankName";
  const lines = [header];
  for (let n = 1; n <= rows; n += 1) {
    const cells: Record<string, string> = {
      reference: `${prefix}-${n}`,
      amount: String(100 + n),
      currency: "NGN",
      bankCode: "044",
      accountNumber: "0123456789",
      accountName: "Ada Obi",
      bankName: "Access Bank",
    };
    patch(n, cells);
    lines.push(
      header
        .split(",")
        .map((c) => cells[c] ?? "")
        .join(","),
    );
  }
  return `${lines.join("\n")}\n`;
}
