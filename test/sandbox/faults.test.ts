import { afterEach, describe, expect, it } from "vitest";
import {
  PaymentsClient,
  PaymentsConnectionError,
  type PaymentsError,
  PaymentsTimeoutError,
} from "../../src/client/index.js";
import { startSandbox } from "../../src/sandbox/index.js";
import { useSandbox } from "../helpers/sandbox.js";

const sb = useSandbox({ settleDelayMs: 50 });
let n = 0;
const key = () => `fault-${++n}`;
const payout = {
  amount: 10,
  currency: "NGN",
  bankCode: "044",
  accountNumber: "0123456789",
  accountName: "Ada Obi",
  bankName: "Access Bank",
} as const;

async function entriesWithKey(k: string, accountId: string): Promise<unknown[]> {
  const entries = (await sb.control("GET", "/ledger", { query: { accountId } })).body.data.entries;
  return entries.filter((e: { idempotencyKey: string }) => e.idempotencyKey === k);
}

async function statuses(apiKey: string, count: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i += 1)
    out.push((await sb.api("GET", "/order/my-orders", { key: apiKey })).status);
  return out;
}

afterEach(async () => {
  expect(await sb.invariants()).toEqual({ ok: true, violations: [] });
});

describe("faults", () => {
  it("are off by default", async () => {
    const a = await sb.newAccount();
    expect(new Set(await statuses(a.apiKey, 50))).toEqual(new Set([200]));
  });

  it("answer a seeded share with 500, 502 and 503, the same sequence for the same seed, with no effect", async () => {
    const faults = { errorRate: 0.3, seed: 7 };
    const a = await sb.newAccount({ faults });
    const b = await sb.newAccount({ faults });
    const seqA = await statuses(a.apiKey, 200);
    const seqB = await statuses(b.apiKey, 200);
    expect(seqA).toEqual(seqB);
    const errors = seqA.filter((s) => s !== 200);
    expect(new Set(errors)).toEqual(new Set([500, 502, 503]));
    // 60 expected; the bounds are more than six standard deviations wide.
    expect(errors.length).toBeGreaterThan(20);
    expect(errors.length).toBeLessThan(100);

    const c = await sb.newAccount({ faults: { errorRate: 1 } });
    const k = key();
    const res = await sb.api("POST", "/transaction/transfer/bank", {
      key: c.apiKey,
      idem: k,
      body: payout,
    });
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(res.body).toMatchObject({
      success: false,
      code: expect.stringMatching(/internal_error|service_unavailable/),
    });
    expect(await entriesWithKey(k, c.accountId)).toEqual([]);
  });

  it("limit requests per key with 429 and Retry-After in whole seconds", async () => {
    const a = await sb.newAccount({ faults: { rateLimitPerSecond: 5 } });
    const other = await sb.newAccount();
    const seq = await statuses(a.apiKey, 8);
    expect(seq.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(seq.slice(5)).toEqual([429, 429, 429]);
    const refused = await sb.api("GET", "/order/my-orders", { key: a.apiKey });
    expect(refused.body).toEqual({
      success: false,
      code: "rate_limited",
      message: "rate limit of 5 requests per second exceeded",
    });
    expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(await statuses(other.apiKey, 8)).toEqual(Array(8).fill(200));
  });

  it("hang: no answer and no effect; the same key works once the fault is off", async () => {
    const a = await sb.newAccount({ faults: { hangRate: 1 } });
    const client = new PaymentsClient({
      baseUrl: sb.sandbox.baseUrl,
      apiKey: a.apiKey,
      requestTimeoutMs: 300,
    });
    const k = key();
    const error = await client
      .withdrawToBank({ idempotencyKey: k, body: payout })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaymentsTimeoutError);
    expect((error as PaymentsError).mayHaveReachedServer).toBe(true);
    expect(await entriesWithKey(k, a.accountId)).toEqual([]);
    await sb.control("DELETE", `/accounts/${a.accountId}/faults`);
    const done = await client.withdrawToBank({ idempotencyKey: k, body: payout });
    expect(done.status).toBe("PENDING");
    await client.close();
  });

  it("drop after commit: the effect happens, the answer never arrives, a retry replays it", async () => {
    const a = await sb.newAccount({ faults: { dropAfterCommitRate: 1 } });
    const client = new PaymentsClient({ baseUrl: sb.sandbox.baseUrl, apiKey: a.apiKey });
    const k = key();
    const error = await client
      .withdrawToBank({ idempotencyKey: k, body: payout })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaymentsConnectionError);
    expect((error as PaymentsError).mayHaveReachedServer).toBe(true);
    const entries = (await entriesWithKey(k, a.accountId)) as { effectId: string }[];
    expect(entries.length).toBeGreaterThan(0);
    await sb.control("DELETE", `/accounts/${a.accountId}/faults`);
    const replay = await sb.api("POST", "/transaction/transfer/bank", {
      key: a.apiKey,
      idem: k,
      body: payout,
    });
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.body.data.transactionId).toBe(entries[0]?.effectId);
    await client.close();
  });

  it("add latency to every answer", async () => {
    const a = await sb.newAccount({ faults: { latencyMs: 150, latencyJitterMs: 50 } });
    const started = performance.now();
    const res = await sb.api("GET", "/order/my-orders", { key: a.apiKey });
    expect(res.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(150);
  });

  it("can be set at start and changed at run time", async () => {
    const own = await startSandbox({
      accounts: [
        { accountId: "acct_f", apiKey: "sk_sandbox_faulty_0001", faults: { errorRate: 1 } },
      ],
    });
    try {
      const first = await fetch(`${own.baseUrl}/order/my-orders`, {
        headers: { "x-api-key": own.apiKey },
      });
      expect(first.status).toBeGreaterThanOrEqual(500);
      const cleared = await fetch(`${own.controlUrl}/accounts/acct_f/faults`, { method: "DELETE" });
      expect(cleared.status).toBe(200);
      const second = await fetch(`${own.baseUrl}/order/my-orders`, {
        headers: { "x-api-key": own.apiKey },
      });
      expect(second.status).toBe(200);
    } finally {
      await own.close();
    }
  });

  it("refuses bad settings, naming the field and the rule", async () => {
    const a = await sb.newAccount();
    const res = await sb.control("PUT", `/accounts/${a.accountId}/faults`, {
      body: { errorRate: 2, hangrate: 0.1 },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe("errorRate: at most 1; hangrate: unknown field");
    const missing = await sb.control("PUT", "/accounts/acct_nope/faults", { body: {} });
    expect(missing.status).toBe(404);
  });
});
