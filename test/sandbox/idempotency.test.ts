import { afterEach, describe, expect, it } from "vitest";
import { useSandbox } from "../helpers/sandbox.js";
import { waitUntil } from "../helpers/wait-until.js";

const sb = useSandbox({ settleDelayMs: 50, idempotencyTtlMs: 24 * 3600 * 1000 });

const payout = (amount = 100) => ({
  amount,
  currency: "NGN",
  bankCode: "044",
  accountNumber: "0123456789",
  accountName: "Ada Obi",
  bankName: "Access Bank",
});

async function effectsOf(key: string, accountId?: string): Promise<string[]> {
  const entries = (await sb.control("GET", "/ledger", accountId ? { query: { accountId } } : {}))
    .body.data.entries;
  return [
    ...new Set(
      entries
        .filter((e: { idempotencyKey: string }) => e.idempotencyKey === key)
        .map((e: { effectId: string }) => e.effectId),
    ),
  ] as string[];
}

afterEach(async () => {
  expect(await sb.invariants()).toEqual({ ok: true, violations: [] });
});

describe("idempotency", () => {
  it("replays the stored answer for the same key and body, marked, with one effect", async () => {
    const first = await sb.api("POST", "/transaction/transfer/bank", {
      idem: "same-1",
      body: payout(),
    });
    const second = await sb.api("POST", "/transaction/transfer/bank", {
      idem: "same-1",
      body: payout(),
    });
    expect(first.status).toBe(200);
    expect(first.headers["idempotent-replayed"]).toBeUndefined();
    expect(second.status).toBe(200);
    expect(second.headers["idempotent-replayed"]).toBe("true");
    expect(second.body).toEqual(first.body);
    expect(await effectsOf("same-1")).toEqual([first.body.data.transactionId]);
  });

  it("treats key order in the body as the same body", async () => {
    const body = payout();
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const a = await sb.api("POST", "/transaction/transfer/bank", { idem: "order-1", body });
    const b = await sb.api("POST", "/transaction/transfer/bank", {
      idem: "order-1",
      body: reordered,
    });
    expect(b.headers["idempotent-replayed"]).toBe("true");
    expect(b.body.data.transactionId).toBe(a.body.data.transactionId);
  });

  it("refuses the same key with another body, and changes nothing", async () => {
    // An account of its own, so that only the first payout's settlement can move its ledger
    // while the test runs (settlement comes 50 ms after the payout, on the sandbox's timer).
    const account = await sb.newAccount();
    const first = await sb.api("POST", "/transaction/transfer/bank", {
      key: account.apiKey,
      idem: "reuse-1",
      body: payout(100),
    });
    const firstId = first.body.data.transactionId as string;
    const others = async () =>
      (
        await sb.control("GET", "/ledger", { query: { accountId: account.accountId } })
      ).body.data.entries.filter((e: { transactionId: string }) => e.transactionId !== firstId);
    const before = { entries: await others(), wallet: await sb.wallet(account.accountId, "NGN") };
    const second = await sb.api("POST", "/transaction/transfer/bank", {
      key: account.apiKey,
      idem: "reuse-1",
      body: payout(200),
    });
    expect(second.status).toBe(422);
    expect(second.body).toEqual({
      success: false,
      code: "idempotency_key_reused",
      message: "this idempotency key was already used with a different request",
    });
    expect(await others()).toEqual(before.entries);
    expect((await sb.wallet(account.accountId, "NGN")).availableBalance).toBe(
      before.wallet.availableBalance,
    );
    expect(await effectsOf("reuse-1", account.accountId)).toEqual([firstId]);
  });

  it("refuses the same key on another operation", async () => {
    await sb.api("POST", "/transaction/transfer/bank", { idem: "cross-op", body: payout() });
    const res = await sb.api("POST", "/transaction/fund-wallet", {
      idem: "cross-op",
      body: { amount: 5, currency: "NGN", paymentMethod: "CARD" },
    });
    expect(res.status).toBe(422);
  });

  it("answers 409 while the first request with the key is still in flight", async () => {
    const account = await sb.newAccount({ faults: { latencyMs: 2000 } });
    const first = sb.api("POST", "/transaction/transfer/bank", {
      key: account.apiKey,
      idem: "flight-1",
      body: payout(),
    });
    // The sandbox logs a request as it arrives and takes its key in the same turn; once the
    // log shows the first, it holds the key for its 2 s of latency.
    const arrived = async () =>
      (await sb.control("GET", "/requests", { query: { accountId: account.accountId } })).body.data
        .requests.length;
    await waitUntil(async () => (await arrived()) > 0, 1_000, "the first request in the log", 5);
    expect(await arrived()).toBe(1);
    const second = await sb.api("POST", "/transaction/transfer/bank", {
      key: account.apiKey,
      idem: "flight-1",
      body: payout(),
    });
    expect(second.status).toBe(409);
    expect(second.body.code).toBe("idempotency_in_flight");
    expect((await first).status).toBe(200);
    const third = await sb.api("POST", "/transaction/transfer/bank", {
      key: account.apiKey,
      idem: "flight-1",
      body: payout(),
    });
    expect(third.headers["idempotent-replayed"]).toBe("true");
    expect(await effectsOf("flight-1", account.accountId)).toHaveLength(1);
  });

  it("does not store validation failures: a corrected retry with the same key works", async () => {
    const bad = await sb.api("POST", "/transaction/transfer/bank", {
      idem: "fix-1",
      body: { ...payout(), accountNumber: "01234567890" },
    });
    expect(bad.status).toBe(400);
    const good = await sb.api("POST", "/transaction/transfer/bank", {
      idem: "fix-1",
      body: payout(),
    });
    expect(good.status).toBe(200);
    expect(good.headers["idempotent-replayed"]).toBeUndefined();
  });

  it("does not store insufficient funds: after funding, the same key succeeds", async () => {
    const account = await sb.newAccount({ balances: { NGN: 50 } });
    const poor = await sb.api("POST", "/transaction/transfer/bank", {
      key: account.apiKey,
      idem: "poor-1",
      body: payout(100),
    });
    expect(poor.status).toBe(400);
    expect(poor.body.code).toBe("insufficient_funds");
    const fund = await sb.api("POST", "/transaction/fund-wallet", {
      key: account.apiKey,
      idem: "top-up",
      body: { amount: 100, currency: "NGN", paymentMethod: "BANK_TRANSFER" },
    });
    expect(fund.status).toBe(200);
    await sb.advance(100);
    const rich = await sb.api("POST", "/transaction/transfer/bank", {
      key: account.apiKey,
      idem: "poor-1",
      body: payout(100),
    });
    expect(rich.status).toBe(200);
  });

  it("scopes keys per account", async () => {
    const other = await sb.newAccount();
    const a = await sb.api("POST", "/transaction/transfer/bank", {
      idem: "shared-key",
      body: payout(),
    });
    const b = await sb.api("POST", "/transaction/transfer/bank", {
      key: other.apiKey,
      idem: "shared-key",
      body: payout(),
    });
    expect(b.headers["idempotent-replayed"]).toBeUndefined();
    expect(b.body.data.transactionId).not.toBe(a.body.data.transactionId);
  });

  it("keeps keys for the configured time (24 h here), then forgets them", async () => {
    const account = await sb.newAccount();
    const first = await sb.api("POST", "/transaction/transfer/bank", {
      key: account.apiKey,
      idem: "ttl-1",
      body: payout(),
    });
    await sb.advance(23 * 3600 * 1000);
    const within = await sb.api("POST", "/transaction/transfer/bank", {
      key: account.apiKey,
      idem: "ttl-1",
      body: payout(),
    });
    expect(within.headers["idempotent-replayed"]).toBe("true");
    expect(within.body.data.transactionId).toBe(first.body.data.transactionId);
    await sb.advance(2 * 3600 * 1000);
    const after = await sb.api("POST", "/transaction/transfer/bank", {
      key: account.apiKey,
      idem: "ttl-1",
      body: payout(),
    });
    expect(after.headers["idempotent-replayed"]).toBeUndefined();
    expect(after.body.data.transactionId).not.toBe(first.body.data.transactionId);
  });
});

describe("account isolation", () => {
  it("answers 404, not 403, for another account's resources", async () => {
    const owner = await sb.newAccount();
    const stranger = await sb.newAccount();
    const accounts = (await sb.control("GET", "/accounts")).body.data.accounts;
    const ownerInfo = accounts.find((a: { accountId: string }) => a.accountId === owner.accountId);
    const sub = ownerInfo.subAccountIds[0];
    const token = ownerInfo.paymentLinks[0].token;
    const txn = await sb.api("POST", "/transaction/transfer/bank", {
      key: owner.apiKey,
      idem: "iso-1",
      body: payout(),
    });
    const stx = await sb.api("POST", `/stable-currency/sub-accounts/${sub}/withdraw`, {
      key: owner.apiKey,
      idem: "iso-2",
      body: {
        amount: "1",
        toAddress: "TJRabPrwbZy45sbavfcjinPJC18kjpRTv8",
        currency: "USDT",
        network: "base",
      },
    });
    const order = await sb.api("POST", "/offer/offer_usd_ngn/order", {
      key: owner.apiKey,
      idem: "iso-3",
      body: { amount: 10, buyerDebitPaymentMethod: "WALLET", buyerCreditPaymentMethod: "WALLET" },
    });
    const probes: [string, string, Record<string, unknown>][] = [
      ["GET", `/transactions/${txn.body.data.transactionId}`, {}],
      ["GET", `/stable-currency/sub-accounts/${sub}/balance`, {}],
      [
        "GET",
        `/stable-currency/sub-accounts/${sub}/transaction/${stx.body.data.transactionId}`,
        {},
      ],
      ["GET", `/order/${order.body.data.orderId}`, {}],
      ["POST", "/payment-link/decline", { query: { token }, body: {} }],
      [
        "POST",
        `/stable-currency/sub-accounts/${sub}/withdraw`,
        {
          idem: "iso-4",
          body: {
            amount: "1",
            toAddress: "TJRabPrwbZy45sbavfcjinPJC18kjpRTv8",
            currency: "USDT",
            network: "base",
          },
        },
      ],
    ];
    for (const [method, path, extra] of probes) {
      const seen = await sb.api(method, path, { key: stranger.apiKey, ...extra });
      expect(seen.status, path).toBe(404);
      expect(seen.body.code).toBe("not_found");
      const own = await sb.api(method, path, { key: owner.apiKey, ...extra, idem: "iso-own" });
      expect(own.status, path).toBe(200);
    }
    const lists = [
      await sb.api("GET", "/transactions", { key: stranger.apiKey }),
      await sb.api("GET", "/order/my-orders", { key: stranger.apiKey }),
      await sb.api("GET", "/stable-currency/transactions", { key: stranger.apiKey }),
    ];
    expect(lists.map((l) => (l.body.data.transactions ?? l.body.data.orders).length)).toEqual([
      0, 0, 0,
    ]);
  });
});
