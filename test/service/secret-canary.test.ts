import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { createLogger } from "../../src/logger.js";
import type { RedisConnection } from "../../src/redis/connection.js";
import { type Service, startService } from "../../src/service/start-service.js";
import { useTestRedis } from "../helpers/redis.js";
import { until } from "../helpers/service.js";

/** Canary API keys: `/` and `+` are what JSON and URLs like to escape. */
const KEY = "sk_canary/Key+0~x7";
const PAUSED_KEY = "sk_canary/Pause+1~y8";
const TOKEN = "tok_canary_0123456789abcdef";

/** Every way an upstream could write `key` inside a JSON string (and in a URL it echoes). */
function encodings(key: string): string[] {
  const u = (c: string) => c.charCodeAt(0).toString(16).padStart(4, "0");
  return [
    key,
    key.replaceAll("/", "\\/"),
    key.replace("+", "\\u002b"),
    [...key].map((c) => `\\u${u(c)}`).join(""),
    [...key].map((c) => `\\u${u(c).toUpperCase()}`).join(""),
    [...key].map((c, i) => (i % 2 ? `\\u${u(c).toUpperCase()}` : c)).join(""),
    encodeURIComponent(key),
  ];
}
const FORMS = encodings(KEY);

/**
 * Finds `key` in stored or served text, whatever escaping it went through on the way (a JSON
 * escape inside a JSON string stored as JSON gains backslashes).
 */
function leakPattern(key: string): RegExp {
  const hex = (code: number, width: number) =>
    [...code.toString(16).padStart(width, "0")]
      .map((d) => (/[a-f]/.test(d) ? `[${d}${d.toUpperCase()}]` : d))
      .join("");
  const units = [...key].map((c) => {
    const code = c.charCodeAt(0);
    const literal = c.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&");
    return `(?:${literal}|\\\\+${literal}|\\\\+u${hex(code, 4)}|%${hex(code, 2)})`;
  });
  return new RegExp(units.join(""));
}

/** What the upstream says for each scenario, named in the payout's accountName. */
function answer(
  scenario: string,
  key: string,
): { status: number; body: unknown; raw?: string; type?: string } {
  const [kind, index] = scenario.split("-") as [string, string];
  const form = encodings(key)[Number(index)] as string;
  const raw = (body: unknown) => JSON.stringify(body).replaceAll("@KEY@", form);
  switch (kind) {
    case "e400":
      return { status: 400, body: raw({ success: false, message: "account @KEY@ is invalid" }) };
    case "e404":
      return { status: 404, body: raw({ success: false, message: "no wallet for @KEY@" }) };
    case "e409":
      return {
        status: 409,
        body: raw({ success: false, code: "idempotency_key_reused", message: "reused by @KEY@" }),
      };
    case "e500":
      return { status: 500, body: raw({ success: false, message: "internal error for @KEY@" }) };
    case "text":
      return { status: 502, body: `gateway says ${form}`, type: "text/plain" };
    case "bad":
      return { status: 200, body: raw({ success: true, message: "@KEY@", data: "@KEY@" }) };
    case "e401":
      return {
        status: 401,
        body: raw({ success: false, message: `key ${encodings(key).join(" or ")} revoked` }),
      };
    default:
      return {
        status: 200,
        body: raw({
          success: true,
          message: "accepted for @KEY@",
          data: transaction(`tx-${index}`, "PENDING", { note: "@KEY@" }),
        }),
      };
  }
}

function transaction(id: string, status: string, extra: Record<string, unknown> = {}) {
  const now = new Date().toISOString();
  return {
    transactionId: id,
    type: "DEBIT",
    status,
    channel: "bank",
    amount: 10,
    fee: 0,
    currency: "NGN",
    createdAt: now,
    updatedAt: now,
    ...extra,
  };
}

const SCENARIOS = ["e400", "e404", "e409", "e500", "text", "bad", "pend"].flatMap((kind) =>
  FORMS.map((_, i) => `${kind}-${i}`),
);

let upstream: Server;
let upstreamUrl = "";
let receiver: Server;
let receiverUrl = "";
const webhookBodies: string[] = [];

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

async function serveUpstream(req: IncomingMessage, res: ServerResponse) {
  const text = await readBody(req);
  const key = String(req.headers["x-api-key"]);
  const lookup = /\/transactions\/tx-(\d+)$/.exec(req.url ?? "");
  let reply: ReturnType<typeof answer>;
  if (lookup) {
    const form = encodings(key)[Number(lookup[1])] as string;
    const data = transaction(`tx-${lookup[1]}`, "FAILED", { failureReason: "declined: @KEY@" });
    reply = {
      status: 200,
      body: JSON.stringify({ success: true, message: "ok", data }).replaceAll("@KEY@", form),
    };
  } else {
    reply = answer(String(JSON.parse(text).accountName), key);
  }
  res.writeHead(reply.status, {
    "content-type": reply.type ?? "application/json",
    // A provider that echoes the key in a header too.
    "x-request-id": `req-${encodings(key)[1]}`,
  });
  res.end(String(reply.body));
}

const redis = useTestRedis("canary");
const logLines: string[] = [];
let service: Service;
let connection: RedisConnection;

async function api(path: string, init: RequestInit = {}) {
  const res = await fetch(`${service.apiUrl}${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${TOKEN}`,
      ...(init.body !== undefined && { "content-type": "application/json" }),
      ...init.headers,
    },
  });
  return { status: res.status, text: await res.text() };
}

function payoutBody(scenario: string) {
  return {
    amount: 10,
    currency: "NGN",
    bankCode: "044",
    accountNumber: "0123456789",
    accountName: scenario,
    bankName: "Canary Bank",
  };
}

beforeAll(async () => {
  upstream = createServer((req, res) => void serveUpstream(req, res));
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  receiver = createServer(async (req, res) => {
    webhookBodies.push(await readBody(req));
    res.writeHead(204).end();
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  const config = loadConfig({
    REDIS_URL: redis.url,
    PAYMENTS_API_URL: upstreamUrl,
    MONEYQ_ACCOUNTS: JSON.stringify([
      { alias: "canary", apiKey: KEY },
      { alias: "paused", apiKey: PAUSED_KEY },
    ]),
    MONEYQ_API_TOKENS: JSON.stringify([
      { name: "canary-ops", token: TOKEN, accounts: ["canary", "paused"] },
    ]),
    MONEYQ_API_PORT: "0",
    MONEYQ_REDIS_PREFIX: redis.prefix,
    MONEYQ_MAX_ATTEMPTS: "2",
    MONEYQ_RATE_LIMIT_PER_SECOND: "1000",
    MONEYQ_WEBHOOK_URL: receiverUrl,
    MONEYQ_WEBHOOK_SECRET: "canary_webhook_secret_0123456789",
    MONEYQ_WEBHOOK_ALLOW_PRIVATE: "127.0.0.0/8",
  });
  const logger = createLogger("trace", {
    write(chunk: string) {
      logLines.push(chunk);
    },
  });
  service = await startService({ config, logger });
  connection = redis.connect();
});
afterAll(async () => {
  await service?.close();
  await Promise.all(
    [upstream, receiver].map((s) => new Promise<void>((r) => (s ? s.close(() => r()) : r()))),
  );
});

/** Every value under the prefix, whatever its type, as text. */
async function dumpKeyspace(): Promise<string> {
  const out: string[] = [];
  for (const key of await redis.keys()) {
    out.push(key);
    const type = await connection.type(key);
    if (type === "string") out.push(String(await connection.get(key)));
    else if (type === "hash") out.push(JSON.stringify(await connection.hgetall(key)));
    else if (type === "list") out.push(JSON.stringify(await connection.lrange(key, 0, -1)));
    else if (type === "set") out.push(JSON.stringify(await connection.smembers(key)));
    else if (type === "zset") out.push(JSON.stringify(await connection.zrange(key, 0, "-1")));
    else if (type === "stream") out.push(JSON.stringify(await connection.xrange(key, "-", "+")));
  }
  return out.join("\n");
}

describe("the API key never leaves the client, in any encoding", () => {
  it("scans logs, API answers, webhooks, reports and the whole keyspace for a canary key", async () => {
    const jobIds: string[] = [];
    for (const scenario of SCENARIOS) {
      const res = await api("/v1/jobs", {
        method: "POST",
        body: JSON.stringify({
          kind: "payout.bank",
          account: "canary",
          idempotencyKey: `canary-${scenario}`,
          request: { body: payoutBody(scenario) },
        }),
      });
      expect(res.status, res.text).toBe(202);
      jobIds.push(JSON.parse(res.text).jobId);
    }
    const batch = await api("/v1/batches", {
      method: "POST",
      body: JSON.stringify({
        kind: "payout.bank",
        account: "canary",
        batchId: "canary-batch",
        rows: SCENARIOS.map((scenario) => ({
          reference: `row-${scenario}`,
          ...payoutBody(scenario),
        })),
      }),
    });
    expect(batch.status, batch.text).toBe(202);
    const paused = await api("/v1/jobs", {
      method: "POST",
      body: JSON.stringify({
        kind: "payout.bank",
        account: "paused",
        idempotencyKey: "canary-e401",
        request: { body: payoutBody("e401-0") },
      }),
    });
    expect(paused.status, paused.text).toBe(202);

    const finished = await until(
      () => api("/v1/batches/canary-batch"),
      (b) => JSON.parse(b.text).state?.startsWith("completed") === true,
      60_000,
    );
    const accounts = await until(
      () => api("/v1/accounts"),
      (a) => a.text.includes("pause"),
      20_000,
    );
    const jobs = await Promise.all(jobIds.map((id) => api(`/v1/jobs/${id}`)));
    for (const job of jobs) expect(JSON.parse(job.text).result).toBeDefined();
    await until(
      async () => webhookBodies.length,
      (n) => n >= SCENARIOS.length * 2,
      30_000,
    );

    const answers = [
      finished.text,
      accounts.text,
      ...jobs.map((j) => j.text),
      (await api("/v1/jobs?account=canary&idempotencyKey=canary-e400-1")).text,
      (await api("/v1/batches/canary-batch/results?format=csv")).text,
      (await api("/v1/batches/canary-batch/results?format=jsonl")).text,
      (await api("/v1/dead-letters?account=canary")).text,
      (await api("/v1/dead-letters")).text,
      (await api("/metrics")).text,
    ];
    const places: [string, string][] = [
      ["logs", logLines.join("")],
      ["API answers", answers.join("\n")],
      ["webhook bodies", webhookBodies.join("\n")],
      ["Redis", await dumpKeyspace()],
    ];
    for (const [where, text] of places) {
      expect(text.length, where).toBeGreaterThan(0);
      for (const key of [KEY, PAUSED_KEY]) {
        const leak = leakPattern(key).exec(text);
        expect(
          leak && text.slice(Math.max(0, leak.index - 80), leak.index + 80),
          `${where} hold the key`,
        ).toBeNull();
      }
    }
    const messages = jobs.map((j) => String(JSON.parse(j.text).result.message ?? ""));
    // The paths were taken: messages came through, with the key taken out.
    expect(messages.filter((m) => m.includes("[REDACTED]")).length).toBeGreaterThanOrEqual(
      FORMS.length * 5,
    );
    expect(accounts.text).toContain("[REDACTED]");
  }, 120_000);
});

describe("credentials in configured URLs", () => {
  it("are not logged", async () => {
    const lines: string[] = [];
    const withCredentials = await startService({
      config: loadConfig({
        REDIS_URL: redis.url.replace("redis://", "redis://:r3dis-pa%40ss@"),
        PAYMENTS_API_URL: upstreamUrl.replace("http://", "http://payuser:pay-p%40ss@"),
        PAYMENTS_API_KEY: KEY,
        MONEYQ_REDIS_PREFIX: `${redis.prefix}-urls`,
        MONEYQ_API_PORT: "0",
      }),
      role: "worker",
      metricsPort: 0,
      logger: createLogger("trace", { write: (chunk: string) => void lines.push(chunk) }),
    }).catch((error: Error) => {
      lines.push(String(error.stack));
      return undefined;
    });
    await withCredentials?.close();
    const text = lines.join("");
    expect(text).toContain("***@");
    for (const secret of ["r3dis-pa", "pay-p%40ss", "pay-p@ss", "payuser"])
      expect(text).not.toContain(secret);
  });
});
