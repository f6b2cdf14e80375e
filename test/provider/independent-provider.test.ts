import { describe, expect, it } from "vitest";
import type { ReportLine } from "../../src/results/report-line.js";
import { TRON_ADDRESS } from "../fixtures/operation-examples.js";
import { jsonFile, PAYSTREAM_ADAPTER, PAYSTREAM_PROFILE_DOC } from "../fixtures/paystream.js";
import { type ForeignRecord, useForeignProvider } from "../helpers/foreign-provider.js";
import { useTestRedis } from "../helpers/redis.js";
import { bankCsv, until } from "../helpers/service.js";
import { startServiceProcess } from "../helpers/service-process.js";

// moneyq against Paystream (test/helpers/foreign-provider.mjs), a provider written from the spec
// alone, in a dialect of its own and a process of its own: lookups wrap the record, lists hold
// bare ones, ids are integers, statuses lower-case words, some payouts are refused in a 200,
// some committed before a 502, some settle after a while. Each run has its own merchant (key).
const PROFILE_KEY = "sk_paystream_live_profile_01";
const ADAPTER_KEY = "sk_paystream_live_adapter_01";
const paystream = useForeignProvider({ apiKeys: [PROFILE_KEY, ADAPTER_KEY], settleMs: 300 });
const redis = useTestRedis("paystream");
const TOKEN = "tok_paystream_0123456789abcdef";
const profile = jsonFile("profile.json", PAYSTREAM_PROFILE_DOC);

const ROWS = 200;
/** Paystream's outcome of a bank payout is its account number's last digit (foreign-provider.mjs). */
function lastDigit(n: number): string {
  const r = n % 20;
  if (r === 1) return "1"; // refused in a 200: insufficient balance, nothing made
  if (r === 2) return "2"; // failed
  if (r === 3 || r === 13) return "3"; // processing, then completed
  if (r === 4) return "4"; // committed, then a 502; the resend replays it
  if (r === 5) return "5"; // processing, then failed
  return "9"; // completed
}

const ONE_OF_EACH = {
  "payout.momo": {
    body: {
      amount: 200,
      currency: "KES",
      phoneNumber: "254712345670",
      network: "MPESA",
      iso2: "KE",
    },
  },
  "payout.stable": {
    params: { subAccountId: "sub_1" },
    body: { amount: "25.5", toAddress: TRON_ADDRESS, currency: "USDT", network: "polygon" },
  },
  "funding.wallet": { body: { amount: 5000, currency: "NGN", paymentMethod: "BANK_TRANSFER" } },
  "exchange.order": {
    params: { offerId: "offer_usd_ngn" },
    body: {
      amount: 20,
      buyerDebitPaymentMethod: "WALLET",
      buyerCreditPaymentMethod: "BANK_TRANSFER",
    },
  },
  "exchange.payment-link-order": {
    params: { offerId: "offer_usd_ngn" },
    query: { token: "plink_1" },
    body: { amount: 20, buyerDebitPaymentMethod: "CARD", buyerCreditPaymentMethod: "WALLET" },
  },
  "wallet.create": { body: { currency: "NGN" } },
  "collection.virtual-account": { body: { amount: 10000, validFor: 30 } },
};

interface Run {
  readonly lines: ReportLine[];
  readonly jobs: Record<string, { result: string; code?: string; upstreamId?: string }>;
}

async function api(url: string, method: string, body?: unknown, type = "application/json") {
  const res = await fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${TOKEN}`,
      ...(body !== undefined && { "content-type": type }),
    },
    ...(body !== undefined && { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text) };
}

/** A 200-row bank batch and one job of every other kind, through `moneyq start`. */
async function payThrough(tag: string, env: Record<string, string>): Promise<Run> {
  const service = await startServiceProcess({
    REDIS_URL: redis.url,
    MONEYQ_REDIS_PREFIX: `${redis.prefix}-${tag}`,
    PAYMENTS_API_URL: paystream.baseUrl,
    MONEYQ_RATE_LIMIT_PER_SECOND: "40",
    MONEYQ_CONFIRM_FIRST_DELAY_MS: "100",
    // Paystream refuses some rows for want of funds whatever the balance: each is to end
    // failed with its message, so no refusal holds the lane here.
    MONEYQ_INSUFFICIENT_FUNDS: "fail",
    MONEYQ_API_TOKENS: JSON.stringify([{ name: "payroll", token: TOKEN, accounts: ["default"] }]),
    ...env,
  });
  try {
    const csv = bankCsv(tag, ROWS, (n, cells) => {
      cells.accountNumber = `012345678${lastDigit(n)}`;
    });
    const submitted = await api(
      `${service.apiUrl}/v1/batches?kind=payout.bank`,
      "POST",
      csv,
      "text/csv",
    );
    expect(submitted.status, submitted.text).toBe(202);
    const { batchId } = submitted.json();
    const jobIds: Record<string, string> = {};
    for (const [kind, request] of Object.entries(ONE_OF_EACH)) {
      const job = { kind, account: "default", idempotencyKey: `${tag}-${kind}`, request };
      const enqueued = await api(`${service.apiUrl}/v1/jobs`, "POST", job);
      expect(enqueued.status, enqueued.text).toBe(202);
      jobIds[kind] = enqueued.json().jobId;
    }
    await until(
      async () => (await api(`${service.apiUrl}/v1/batches/${batchId}`, "GET")).json(),
      (b) => b.finishedAt !== undefined,
      60_000,
    );
    const report = await api(`${service.apiUrl}/v1/batches/${batchId}/results?format=jsonl`, "GET");
    const lines = report.text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as ReportLine);
    const jobs: Run["jobs"] = {};
    for (const [kind, jobId] of Object.entries(jobIds))
      jobs[kind] = (
        await until(
          async () => (await api(`${service.apiUrl}/v1/jobs/${jobId}`, "GET")).json(),
          (j) => j.result !== null && j.result !== undefined,
          30_000,
        )
      ).result;
    return { lines, jobs };
  } finally {
    expect(await service.stop()).toBe(0);
  }
}

/** What moneyq should say of a payout the provider made, from the provider's final word. */
const expected = (record: ForeignRecord | undefined) =>
  record === undefined ? "failed" : record.state === "completed" ? "succeeded" : record.state;

async function checkAgainstProvider(run: Run, merchant: string): Promise<void> {
  const state = await paystream.state();
  const records = state.records.filter((r) => r.merchant === merchant);
  const byKey = new Map(records.map((r) => [r.reference, r]));
  const sentWith = (key: string) =>
    state.requests.filter(
      (r) => r.merchant === merchant && r.idempotencyKey === key && r.status !== 429,
    ).length;
  expect(run.lines).toHaveLength(ROWS);
  for (const line of run.lines) {
    const key = line.idempotencyKey as string;
    const record = byKey.get(key);
    expect({ row: line.row, result: line.result }).toEqual({
      row: line.row,
      result: expected(record),
    });
    if (record === undefined) {
      // Refused in a 200: one request, failed with the provider's reason, nothing made.
      expect(lastDigit(line.row)).toBe("1");
      expect(line.error).toBe("insufficient_funds: withdrawToBank: Insufficient balance");
      expect(sentWith(key)).toBe(1);
    } else expect(line.upstreamId).toBe(String(record.id));
  }
  // No answer read backwards or left unknown; at most one effect per key.
  expect(run.lines.filter((l) => l.result === "needs_reconciliation")).toEqual([]);
  expect(Object.values(state.effects).every((n) => n <= 1)).toBe(true);
  expect(run.lines.filter((l) => l.result === "succeeded")).toHaveLength(140 + 20 + 10);
  for (const [kind, result] of Object.entries(run.jobs)) {
    expect({ kind, result: result.result }).toEqual({ kind, result: "succeeded" });
    expect(result.upstreamId, kind).toMatch(/^\d+$/);
  }
}

describe("moneyq against a provider it did not write", { timeout: 180_000 }, () => {
  let throughProfile: Run | undefined;

  it("pays a 200-row batch and one job of each kind through its profile, as the provider's books say", async () => {
    throughProfile = await payThrough("profile", {
      PAYMENTS_API_KEY: PROFILE_KEY,
      MONEYQ_PROVIDER_PROFILE: profile,
    });
    await checkAgainstProvider(throughProfile, "0");
  });

  it("gives the same results through an adapter module instead of a profile", async () => {
    const throughAdapter = await payThrough("adapter", {
      PAYMENTS_API_KEY: ADAPTER_KEY,
      MONEYQ_PROVIDER_ADAPTER: PAYSTREAM_ADAPTER,
    });
    await checkAgainstProvider(throughAdapter, "1");
    const outcome = (run: Run | undefined) =>
      run?.lines.map((l) => [l.row, l.result, l.error]).sort((a, b) => Number(a[0]) - Number(b[0]));
    expect(outcome(throughAdapter)).toEqual(outcome(throughProfile));
  });
});
