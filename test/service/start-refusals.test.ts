import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PrivateRedis, startPrivateRedis } from "../../src/redis/private-redis.js";
import { runCli } from "../helpers/cli.js";
import { installed } from "../helpers/installed.js";

/**
 * `moneyq start` refuses each kind of bad setting before it connects to anything: exit 2, one
 * message naming the variable and its rule, no stack trace, and its Redis (a private one, so
 * that every connection to it is this test's or the service's) never sees a connection.
 */
let redis: PrivateRedis;
let admin: Redis;
let taken: Server;
let takenPort = 0;
const work = mkdtempSync(join(tmpdir(), "moneyq-refusals-"));

beforeAll(async () => {
  redis = await startPrivateRedis(installed("redis-server", "redis-server"));
  admin = new Redis(redis.url);
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
  takenPort = (taken.address() as { port: number }).port;
});

afterAll(async () => {
  admin?.disconnect();
  await redis?.stop();
  await new Promise((resolve) => taken?.close(resolve));
  rmSync(work, { recursive: true, force: true });
});

const SECRET = "refusal_test_webhook_secret_0123";

interface Case {
  readonly what: string;
  readonly env: () => Record<string, string>;
  readonly role?: "all" | "worker";
  readonly variable: string;
  readonly rule: RegExp;
}

const CASES: Case[] = [
  {
    what: "a webhook URL the address guard blocks",
    env: () => ({ MONEYQ_WEBHOOK_URL: "http://127.0.0.1:9/h", MONEYQ_WEBHOOK_SECRET: SECRET }),
    variable: "MONEYQ_WEBHOOK_URL",
    rule: /host 127\.0\.0\.1 is in the loopback range, not a public address.*MONEYQ_WEBHOOK_ALLOW_PRIVATE/,
  },
  {
    what: "a webhook URL of a private IPv6 address, another range than the one allowed",
    env: () => ({
      MONEYQ_WEBHOOK_URL: "http://[fd00::1]/h",
      MONEYQ_WEBHOOK_SECRET: SECRET,
      MONEYQ_WEBHOOK_ALLOW_PRIVATE: "127.0.0.0/8",
    }),
    variable: "MONEYQ_WEBHOOK_URL",
    rule: /host fd00::1 is in the uniqueLocal range/,
  },
  {
    what: "a webhook URL that does not parse",
    env: () => ({ MONEYQ_WEBHOOK_URL: "http://[zz/h", MONEYQ_WEBHOOK_SECRET: SECRET }),
    variable: "MONEYQ_WEBHOOK_URL",
    rule: /must be an http\(s\) URL/,
  },
  {
    what: "a webhook URL without its secret",
    env: () => ({ MONEYQ_WEBHOOK_URL: "https://hooks.example.com/h" }),
    variable: "MONEYQ_WEBHOOK_SECRET",
    rule: /go together/,
  },
  {
    what: "a bad allowed range",
    env: () => ({ MONEYQ_WEBHOOK_ALLOW_PRIVATE: "127.0.0.1/8" }),
    variable: "MONEYQ_WEBHOOK_ALLOW_PRIVATE",
    rule: /host bits are set/,
  },
  {
    what: "an unknown variable",
    env: () => ({ MONEYQ_CONCURENCY: "4" }),
    variable: "MONEYQ_CONCURENCY",
    rule: /unknown variable/,
  },
  {
    what: "a number that is not one",
    env: () => ({ MONEYQ_CONCURRENCY: "many" }),
    variable: "MONEYQ_CONCURRENCY",
    rule: /must be a positive whole number/,
  },
  {
    what: "a Redis URL that is not one",
    env: () => ({ REDIS_URL: "http://127.0.0.1:6379" }),
    variable: "REDIS_URL",
    rule: /must be a redis:\/\/ or rediss:\/\/ URL/,
  },
  {
    what: "a provider URL without a key",
    env: () => ({ PAYMENTS_API_URL: "https://api.example.com/v1" }),
    variable: "PAYMENTS_API_KEY",
    rule: /required when PAYMENTS_API_URL is set/,
  },
  {
    what: "accounts that are not JSON",
    env: () => ({ PAYMENTS_API_URL: "https://api.example.com/v1", MONEYQ_ACCOUNTS: "[{" }),
    variable: "MONEYQ_ACCOUNTS",
    rule: /must be valid JSON/,
  },
  {
    what: "an accounts file that is not there",
    env: () => ({
      PAYMENTS_API_URL: "https://api.example.com/v1",
      MONEYQ_ACCOUNTS_FILE: join(work, "missing-accounts.json"),
    }),
    variable: "MONEYQ_ACCOUNTS_FILE",
    rule: /cannot read the file \(ENOENT\)/,
  },
  {
    what: "an account in the accounts file whose key is not in the keys file",
    env: () => {
      const accounts = join(work, "accounts.json");
      const keys = join(work, "account-keys.json");
      writeFileSync(accounts, JSON.stringify([{ alias: "shop-1", apiKeyRef: "shop-1" }]));
      writeFileSync(keys, JSON.stringify({ "shop-2": "sk_live_refusal_0123" }));
      return {
        PAYMENTS_API_URL: "https://api.example.com/v1",
        MONEYQ_ACCOUNTS_FILE: accounts,
        MONEYQ_ACCOUNT_KEYS_FILE: keys,
      };
    },
    variable: "MONEYQ_ACCOUNTS_FILE[0].apiKeyRef",
    rule: /names no key in MONEYQ_ACCOUNT_KEYS_FILE/,
  },
  {
    what: "a token of an account that is not configured",
    env: () => ({
      MONEYQ_API_TOKENS: JSON.stringify([
        { name: "ops", token: "tok_refusal_0123456789", accounts: ["nobody"] },
      ]),
    }),
    variable: "MONEYQ_API_TOKENS[0].accounts",
    rule: /no account "nobody" is configured/,
  },
  {
    what: "an approval policy without a rule",
    env: () => ({ MONEYQ_APPROVAL_POLICIES: JSON.stringify([{ account: "default" }]) }),
    variable: "MONEYQ_APPROVAL_POLICIES[0]",
    rule: /give batches, batchesOver, jobsOver or resolutions/,
  },
  {
    what: "a provider profile that is not there",
    env: () => ({ MONEYQ_PROVIDER_PROFILE: join(work, "missing.json") }),
    variable: "MONEYQ_PROVIDER_PROFILE",
    rule: /.+/,
  },
  {
    what: "a provider profile that is not valid",
    env: () => {
      const file = join(work, "bad-profile.json");
      writeFileSync(file, JSON.stringify({ statusField: 7 }));
      return { MONEYQ_PROVIDER_PROFILE: file };
    },
    variable: "MONEYQ_PROVIDER_PROFILE",
    rule: /.+/,
  },
  {
    what: "a trace endpoint with credentials",
    env: () => ({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://user:pw@otel.example.com" }),
    variable: "OTEL_EXPORTER_OTLP_ENDPOINT",
    rule: /must not carry credentials/,
  },
  {
    what: "a log level that is not one",
    env: () => ({ MONEYQ_LOG_LEVEL: "loud" }),
    variable: "MONEYQ_LOG_LEVEL",
    rule: /must be one of/,
  },
  {
    what: "an API port another process listens on",
    env: () => ({ MONEYQ_API_PORT: String(takenPort) }),
    variable: "MONEYQ_API_PORT",
    rule: /127\.0\.0\.1:\d+ is in use by another process/,
  },
  {
    what: "an API host that is not this machine's",
    // TEST-NET-1 (RFC 5737): no machine here has it.
    env: () => ({ MONEYQ_API_HOST: "192.0.2.1" }),
    variable: "MONEYQ_API_HOST",
    rule: /192\.0\.2\.1 is not an address of this machine/,
  },
  {
    what: "a worker's metrics port another process listens on",
    role: "worker",
    env: () => ({ MONEYQ_METRICS_PORT: String(takenPort) }),
    variable: "MONEYQ_METRICS_PORT",
    rule: /127\.0\.0\.1:\d+ is in use by another process/,
  },
];

/** Connections Redis has accepted since it started (INFO stats). */
async function connectionsReceived(): Promise<number> {
  const info = await admin.info("stats");
  return Number(/total_connections_received:(\d+)/.exec(info)?.[1]);
}

describe("moneyq start with a bad setting", () => {
  it.each(CASES)("refuses $what: exit 2, naming $variable, before connecting", async (c) => {
    const before = await connectionsReceived();
    const { code, stdout, stderr } = await runCli(["start", "--role", c.role ?? "all"], {
      REDIS_URL: redis.url,
      MONEYQ_API_PORT: "0",
      MONEYQ_METRICS_PORT: "0",
      MONEYQ_REDIS_PREFIX: "refusals",
      ...c.env(),
    });
    expect(code, stderr).toBe(2);
    expect(stderr).toMatch(/^moneyq: /);
    const line = stderr.split("\n").find((l) => l.trim().startsWith(`${c.variable}:`));
    expect(line, stderr).toBeDefined();
    expect(line).toMatch(c.rule);
    // No stack trace, and nothing started: no log line of a start.
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(stdout).not.toContain("moneyq starting");
    expect(await connectionsReceived()).toBe(before);
    expect(await admin.dbsize()).toBe(0);
  });
});
