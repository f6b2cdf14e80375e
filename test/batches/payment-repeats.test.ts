import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { createLogger } from "../../src/logger.js";
import { type Service, startService } from "../../src/service/start-service.js";
import { useTestRedis } from "../helpers/redis.js";
import { useSandboxProcess } from "../helpers/sandbox-process.js";
import { until } from "../helpers/service.js";

// Three accounts, one per policy on repeated payments; on each, batch A (80 rows) is paid, then
// batch B (100 rows) repeats 50 of A's payments under new references (so new keys).
const ACCOUNTS = ["warned", "held", "refused"] as const;
const keyOf = (account: string) => `sk_sandbox_repeats_${account}_0001`.slice(0, 28);
const tokenOf = (account: string, who: "ops" | "checker") =>
  `tok_${account}_${who}_0123456789abcdef`;
const redis = useTestRedis("repeats");
const sandbox = useSandboxProcess(["--settle-delay-ms", "5"]);
let service: Service | undefined;

beforeAll(async () => {
  for (const a of ACCOUNTS) await sandbox.addAccount(`acct_${a}`, keyOf(a));
  const env = {
    REDIS_URL: redis.url,
    PAYMENTS_API_URL: sandbox.baseUrl,
    MONEYQ_REDIS_PREFIX: redis.prefix,
    MONEYQ_LOG_LEVEL: "silent",
    MONEYQ_API_PORT: "0",
    MONEYQ_ACCOUNTS: JSON.stringify(
      ACCOUNTS.map((a) => ({ alias: a, apiKey: keyOf(a), ratePerSecond: 500, concurrency: 16 })),
    ),
    MONEYQ_API_TOKENS: JSON.stringify(
      ACCOUNTS.flatMap((a) => [
        { name: `${a}-ops`, token: tokenOf(a, "ops"), accounts: [a] },
        { name: `${a}-checker`, token: tokenOf(a, "checker"), accounts: [a] },
      ]),
    ),
    MONEYQ_PAYMENT_REPEATS: JSON.stringify([
      { account: "held", policy: "hold" },
      { account: "refused", policy: "refuse", windowDays: 3 },
    ]),
  };
  service = await startService({ config: loadConfig(env), logger: createLogger("silent") });
}, 60_000);
afterAll(async () => {
  await service?.close();
});

async function api(
  method: string,
  path: string,
  token: string,
  body?: { csv?: string; json?: unknown },
  // biome-ignore lint/suspicious/noExplicitAny: tests read answers of many shapes
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body?.csv !== undefined) headers["content-type"] = "text/csv";
  if (body?.json !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${service?.apiUrl}${path}`, {
    method,
    headers,
    ...(body && { body: body.csv ?? JSON.stringify(body.json) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** A bank payout row paying beneficiary `n` (its own account number) an amount of its own. */
function payment(reference: string, n: number): string {
  return `${reference},${1000 + n},NGN,044,${String(3_000_000_000 + n)},Ada Obi ${n},Access Bank`;
}
const HEADER = "reference,amount,currency,bankCode,accountNumber,accountName,bankName";
/** Batch A: beneficiaries 1..80. */
const batchA = (account: string) =>
  [HEADER, ...Array.from({ length: 80 }, (_, i) => payment(`${account}-a-${i + 1}`, i + 1))].join(
    "\n",
  );
/** Batch B: rows 1..50 pay A's beneficiaries 11..60 again, rows 51..100 new ones (101..150). */
const batchB = (account: string) =>
  [
    HEADER,
    ...Array.from({ length: 100 }, (_, i) =>
      payment(`${account}-b-${i + 1}`, i < 50 ? i + 11 : i + 51),
    ),
  ].join("\n");

/** The account's payout requests the sandbox received. */
async function payoutsAt(account: string): Promise<number> {
  const log = await sandbox.requests(`acct_${account}`);
  return log.filter((r) => r.method === "POST" && r.path.endsWith("/transaction/transfer/bank"))
    .length;
}

const submit = (account: string, batchId: string, csv: string, query = "") =>
  api("POST", `/v1/batches?kind=payout.bank&batchId=${batchId}${query}`, tokenOf(account, "ops"), {
    csv,
  });
const finished = (account: string, batchId: string) =>
  until(
    () => api("GET", `/v1/batches/${batchId}`, tokenOf(account, "ops")),
    (r) => r.body?.finishedAt !== undefined,
    60_000,
  );

/** Pays batch A on the account, all 80 rows, and answers A's batch id. */
async function payBatchA(account: string): Promise<string> {
  const batchId = `${account}-payroll-a`;
  expect((await submit(account, batchId, batchA(account))).status).toBe(202);
  const done = await finished(account, batchId);
  expect(done.body).toMatchObject({ state: "completed", counts: { succeeded: 80 } });
  expect(await payoutsAt(account)).toBe(80);
  return batchId;
}

/** What a submission's report must say: exactly B's rows 1..50, each A's row 10 below it, paid. */
function expectFiftyRepeats(
  repeats: {
    count: number;
    rows: { row: number; matches: { batchId?: string; row?: number; state: string }[] }[];
  },
  batchIdA: string,
): void {
  expect(repeats.count).toBe(50);
  expect(repeats.rows.map((r) => r.row)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  for (const r of repeats.rows)
    expect(r.matches).toEqual([
      expect.objectContaining({ batchId: batchIdA, row: r.row + 10, state: "paid" }),
    ]);
}

describe("the same payment caught across batches", () => {
  it("warn (the default): the dry run lists exactly the 50 repeats with batch A's rows; the batch is sent whole", async () => {
    const a = await payBatchA("warned");
    const dry = await submit("warned", "warned-payroll-b", batchB("warned"), "&dryRun=true");
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ accepted: 100, invalid: 0, repeats: { policy: "warn" } });
    expectFiftyRepeats(dry.body.repeats, a);
    expect(await payoutsAt("warned")).toBe(80);

    const sent = await submit("warned", "warned-payroll-b", batchB("warned"));
    expect(sent.status).toBe(202);
    expectFiftyRepeats(sent.body.repeats, a);
    const done = await finished("warned", "warned-payroll-b");
    expect(done.body).toMatchObject({ state: "completed", counts: { succeeded: 100 } });
    expect(done.body.repeats.count).toBe(50);
    expect(await payoutsAt("warned")).toBe(180);
  }, 120_000);

  it("hold: the batch waits for approval naming the 50, nothing is sent until another token approves it", async () => {
    const a = await payBatchA("held");
    const dry = await submit("held", "held-payroll-b", batchB("held"), "&dryRun=true");
    expectFiftyRepeats(dry.body.repeats, a);
    expect(dry.body.repeats.policy).toBe("hold");

    const sent = await submit("held", "held-payroll-b", batchB("held"));
    expect(sent.status).toBe(202);
    expect(sent.body.status).toMatchObject({
      state: "awaiting_approval",
      approval: { state: "pending" },
      accepted: 100,
    });
    const waiting = await api("GET", "/v1/batches/held-payroll-b", tokenOf("held", "checker"));
    expectFiftyRepeats(waiting.body.repeats, a);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await payoutsAt("held")).toBe(80);

    const own = await api("POST", "/v1/batches/held-payroll-b/approve", tokenOf("held", "ops"));
    expect(own.status).toBe(403);
    const approved = await api(
      "POST",
      "/v1/batches/held-payroll-b/approve",
      tokenOf("held", "checker"),
    );
    expect(approved.status).toBe(200);
    expect(approved.body.jobs).toBe(100);
    const done = await finished("held", "held-payroll-b");
    expect(done.body).toMatchObject({ state: "completed", counts: { succeeded: 100 } });
    expect(await payoutsAt("held")).toBe(180);
  }, 120_000);

  it("refuse: the 50 repeats are invalid rows naming the rule; the 50 others are sent", async () => {
    const a = await payBatchA("refused");
    const dry = await submit("refused", "refused-payroll-b", batchB("refused"), "&dryRun=true");
    expect(dry.body).toMatchObject({ accepted: 50, invalid: 50, repeats: { policy: "refuse" } });
    expectFiftyRepeats(dry.body.repeats, a);
    expect(dry.body.issues.map((i: { row: number }) => i.row)).toEqual(
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
    expect(dry.body.issues[0].rule).toBe(
      `repeats a payment paid ${new Date().toISOString().slice(0, 10)} in batch ${a} row 11 (payment repeats: refuse, window 3 days)`,
    );

    // As any invalid row, a repeat refuses the whole batch unless partial batches are allowed.
    const whole = await submit("refused", "refused-payroll-b", batchB("refused"));
    expect(whole.status).toBe(422);
    expect(whole.body.error.rows).toHaveLength(50);
    expect(await payoutsAt("refused")).toBe(80);

    const partial = await submit(
      "refused",
      "refused-payroll-b",
      batchB("refused"),
      "&allowPartial=true",
    );
    expect(partial.status).toBe(202);
    expect(partial.body).toMatchObject({ accepted: 50, invalid: 50 });
    const done = await finished("refused", "refused-payroll-b");
    // Its skipped rows make it completed_with_failures, as any partial batch's do.
    expect(done.body).toMatchObject({
      state: "completed_with_failures",
      counts: { succeeded: 50, failed: 0 },
    });
    expect(await payoutsAt("refused")).toBe(130);
  }, 120_000);

  it("rows of one file that repeat each other are reported too, with the earlier row", async () => {
    const csv = [HEADER, payment("dup-1", 500), payment("dup-2", 501), payment("dup-3", 500)].join(
      "\n",
    );
    const dry = await submit("warned", "warned-in-file", csv, "&dryRun=true");
    expect(dry.body.repeats).toMatchObject({
      count: 1,
      rows: [{ row: 3, reference: "dup-3", matches: [{ state: "in_file", row: 1 }] }],
    });
  });
});

describe("a job enqueued alone gets the same check", () => {
  /** A payout to batch A's beneficiary 20, as a job enqueued alone under a new key. */
  const job = (key: string) => ({
    kind: "payout.bank",
    idempotencyKey: key,
    request: {
      body: {
        amount: 1020,
        currency: "NGN",
        bankCode: "044",
        accountNumber: "3000000020",
        accountName: "Ada Obi 20",
        bankName: "Access Bank",
      },
    },
  });

  it("warn: 202 naming the payments it repeats; refuse: 409 naming the field and rule, nothing enqueued; hold: it waits for approval", async () => {
    const warned = await api("POST", "/v1/jobs", tokenOf("warned", "ops"), {
      json: job("single-warned-1"),
    });
    expect(warned.status).toBe(202);
    // Newest first: batch B paid beneficiary 20 again (its row 10) after batch A.
    expect(warned.body.repeats).toEqual([
      expect.objectContaining({ batchId: "warned-payroll-b", row: 10, state: "paid" }),
      expect.objectContaining({ batchId: "warned-payroll-a", row: 20, state: "paid" }),
    ]);

    const before = await payoutsAt("refused");
    const refused = await api("POST", "/v1/jobs", tokenOf("refused", "ops"), {
      json: job("single-refused-1"),
    });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      code: "payment_repeated",
      details: [{ field: "body.request.body" }],
      repeats: [expect.objectContaining({ batchId: "refused-payroll-a", row: 20 })],
    });
    expect(refused.body.error.details[0].rule).toContain(
      "(payment repeats: refuse, window 3 days)",
    );
    const absent = await api(
      "GET",
      "/v1/jobs?idempotencyKey=single-refused-1",
      tokenOf("refused", "ops"),
    );
    expect(absent.status).toBe(404);

    const held = await api("POST", "/v1/jobs", tokenOf("held", "ops"), {
      json: job("single-held-1"),
    });
    expect(held.status).toBe(202);
    const waiting = await api("GET", `/v1/jobs/${held.body.jobId}`, tokenOf("held", "checker"));
    expect(waiting.body).toMatchObject({
      state: "awaiting_approval",
      approval: { state: "pending" },
      repeats: [
        expect.objectContaining({ batchId: "held-payroll-b", row: 10, state: "paid" }),
        expect.objectContaining({ batchId: "held-payroll-a", row: 20, state: "paid" }),
      ],
    });
    const approved = await api(
      "POST",
      `/v1/jobs/${held.body.jobId}/approve`,
      tokenOf("held", "checker"),
    );
    expect(approved.status).toBe(200);
    await until(
      () => api("GET", `/v1/jobs/${held.body.jobId}`, tokenOf("held", "ops")),
      (r) => r.body?.result?.result === "succeeded",
      30_000,
    );
    expect(await payoutsAt("refused")).toBe(before);
  }, 60_000);
});
