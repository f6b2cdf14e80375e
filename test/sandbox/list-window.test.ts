import { afterAll, afterEach, describe, expect, it } from "vitest";
import { PaymentsClient } from "../../src/client/payments-client.js";
import { translateRequest } from "../../src/provider/requests.js";
import { TRON_ADDRESS } from "../fixtures/operation-examples.js";
import { profileOf } from "../fixtures/provider-profiles.js";
import { useSandbox } from "../helpers/sandbox.js";
import { sandboxAccount } from "../helpers/sandbox-account.js";

// Nothing settles by wall time: the tests move the sandbox's clock.
const SETTLE = 10 * 60_000;
const DAY = 24 * 3600_000;
const sb = useSandbox({ settleDelayMs: SETTLE });

afterEach(async () => {
  expect(await sb.invariants()).toEqual({ ok: true, violations: [] });
});

const ids = (items: Record<string, unknown>[]) => items.map((t) => t.transactionId).sort();
/** The same instant written with a +01:00 offset. */
const plusOneHour = (iso: string) =>
  new Date(Date.parse(iso) + 3600_000).toISOString().replace("Z", "+01:00");
const shifted = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();

describe("since and until on the transaction list (4.11)", () => {
  it("since is inclusive and until exclusive, to the millisecond, on createdAt, in any offset", async () => {
    const a = await sandboxAccount(sb);
    const first = await a.pay(100);
    await sb.advance(DAY);
    const second = await a.pay(200);
    await sb.advance(DAY);
    const third = await a.pay(300);
    const at = (t: Record<string, unknown>) => t.createdAt as string;

    expect(ids(await a.list({ since: at(second) }))).toEqual(ids([second, third]));
    expect(ids(await a.list({ until: at(second) }))).toEqual(ids([first]));
    expect(ids(await a.list({ since: at(first), until: at(third) }))).toEqual(ids([first, second]));
    expect(ids(await a.list({ since: plusOneHour(at(second)) }))).toEqual(ids([second, third]));
    expect(ids(await a.list({ since: shifted(at(second), 1) }))).toEqual(ids([third]));
    expect(ids(await a.list({ until: shifted(at(second), 1) }))).toEqual(ids([first, second]));
    expect(ids(await a.list({}))).toEqual(ids([first, second, third]));
  });

  it("combines with the other filters and the sort", async () => {
    const a = await sandboxAccount(sb);
    const failed = await a.pay(100, "0000000001");
    await sb.advance(SETTLE);
    const late = await a.pay(150);
    await sb.advance(SETTLE);
    const since = failed.createdAt as string;
    const rows = await a.list({ since, status: "SUCCESSFUL", sortBy: "amount" });
    expect(ids(rows)).toEqual(ids([late]));
    const all = await a.list({ since, sortBy: "amount", sortDirection: "asc" });
    expect(all.map((t) => t.amount)).toEqual([100, 150]);
  });

  it("refuses a time without an offset, a date alone, and an empty or inverted window", async () => {
    const a = await sandboxAccount(sb);
    const cases: [Record<string, string>, string, string][] = [
      [
        { since: "2025-01-31T00:00:00" },
        "since",
        "must be an ISO 8601 date and time with an offset",
      ],
      [{ until: "2025-01-31" }, "until", "must be an ISO 8601 date and time with an offset"],
      [{ since: "2025-02-30T00:00:00Z" }, "since", "must be an ISO 8601"],
      [
        { since: "2025-01-31T00:00:00Z", until: "2025-01-31T01:00:00+01:00" },
        "until",
        "must be later than since",
      ],
      [
        { since: "2025-01-31T00:00:00Z", until: "2025-01-30T00:00:00Z" },
        "until",
        "must be later than since",
      ],
    ];
    for (const [query, field, rule] of cases) {
      const res = await a.api("GET", "/transactions", { query });
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.body.code).toBe("validation_error");
      expect(res.body.message).toContain(`${field}: ${rule}`);
      expect(res.body.errors).toContainEqual(expect.objectContaining({ field }));
    }
  });

  it("each item carries what a reconciliation matches on, reversal links included", async () => {
    const a = await sandboxAccount(sb);
    const paid = await a.pay(888.88);
    await sb.advance(SETTLE);
    await sb.advance(SETTLE);
    const items = await a.list({ since: paid.createdAt as string });
    const original = items.find((t) => t.transactionId === paid.transactionId);
    const reversal = items.find((t) => t.reversalOf === paid.transactionId);
    expect(original).toMatchObject({
      transactionId: paid.transactionId,
      status: "SUCCESSFUL",
      type: "DEBIT",
      amount: 888.88,
      currency: "NGN",
      createdAt: paid.createdAt,
      reversedBy: reversal?.transactionId,
    });
    expect(reversal).toMatchObject({
      transactionId: expect.stringMatching(/^txn_/),
      status: "SUCCESSFUL",
      type: "CREDIT",
      amount: 888.88,
      currency: "NGN",
      createdAt: expect.any(String),
      reversalOf: paid.transactionId,
    });
  });
});

describe("since and until on the stable-currency list (4.13) and the orders (4.16)", () => {
  it("4.13: the window applies before paging; total counts the window", async () => {
    const a = await sandboxAccount(sb);
    const demo = (await sb.control("GET", "/accounts")).body.data.accounts.find(
      (x: { accountId: string }) => x.accountId === a.accountId,
    );
    const withdraw = (key: string) =>
      a.api("POST", `/stable-currency/sub-accounts/${demo.subAccountIds[0]}/withdraw`, {
        idem: key,
        body: { amount: "5", toAddress: TRON_ADDRESS, currency: "USDT", network: "base" },
      });
    const early = (await withdraw(`stable-early-${a.accountId}`)).body.data;
    await sb.advance(DAY);
    const late = (await withdraw(`stable-late-${a.accountId}`)).body.data;
    const page = async (query: Record<string, string | number>) =>
      (await a.api("GET", "/stable-currency/transactions", { query })).body.data;

    const since = await page({ since: late.createdAt, pageSize: 1 });
    // The late withdrawal and its network fee: two in the window, one per page.
    expect(since.total).toBe(2);
    expect(since.transactions).toHaveLength(1);
    const until = await page({ until: late.createdAt, type: "WITHDRAWAL" });
    expect(until.transactions.map((t: { transactionId: string }) => t.transactionId)).toEqual([
      early.transactionId,
    ]);
    const bad = await a.api("GET", "/stable-currency/transactions", {
      query: { until: "tomorrow" },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("until: must be an ISO 8601 date and time with an offset");
  });

  it("4.16: orders take the window too, and nothing else", async () => {
    const a = await sandboxAccount(sb);
    const order = (key: string) =>
      a.api("POST", "/offer/offer_usd_ngn/order", {
        idem: key,
        body: {
          amount: 100,
          buyerDebitPaymentMethod: "WALLET",
          buyerCreditPaymentMethod: "WALLET",
        },
      });
    const early = (await order(`order-early-${a.accountId}`)).body.data;
    await sb.advance(DAY);
    const late = (await order(`order-late-${a.accountId}`)).body.data;
    const orders = async (query: Record<string, string>) => {
      const res = await a.api("GET", "/order/my-orders", { query });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data.orders.map((o: { orderId: string }) => o.orderId);
    };
    expect(await orders({})).toEqual([late.orderId, early.orderId]);
    expect(await orders({ since: late.createdAt })).toEqual([late.orderId]);
    expect(await orders({ until: late.createdAt })).toEqual([early.orderId]);
    const unknown = await a.api("GET", "/order/my-orders", { query: { page: 1 } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toBe("page: unknown field");
    const inverted = await a.api("GET", "/order/my-orders", {
      query: { since: late.createdAt, until: early.createdAt },
    });
    expect(inverted.status).toBe(400);
    expect(inverted.body.message).toBe("until: must be later than since");
  });
});

describe("the window's names in a provider's dialect", () => {
  const profile = profileOf({
    requests: {
      query: {
        listTransactions: { since: "created_gte", until: "created_lt" },
        listStableTransactions: { since: "from", until: "to" },
        listOrders: { since: "from", until: "to" },
      },
    },
  });
  const foreign = useSandbox({ profile, settleDelayMs: SETTLE });
  const clients: PaymentsClient[] = [];
  afterAll(() => Promise.all(clients.map((c) => c.close())));

  it("the profile renames since and until of all three lists", () => {
    const window = { since: "2025-01-01T00:00:00Z", until: "2025-02-01T00:00:00Z" };
    expect(translateRequest(profile, "listTransactions", { query: window })).toEqual({
      query: { created_gte: window.since, created_lt: window.until },
    });
    expect(translateRequest(profile, "listOrders", { query: window })).toEqual({
      query: { from: window.since, to: window.until },
    });
    expect(translateRequest(profile, "listStableTransactions", { query: window })).toEqual({
      query: { from: window.since, to: window.until },
    });
    // A window name equal to another parameter's would overwrite it: refused.
    expect(() =>
      profileOf({ requests: { query: { listTransactions: { since: "status" } } } }),
    ).toThrow(/requests\.query\.listTransactions/);
  });

  it("the client sends the provider's names; the sandbox in that dialect filters by them", async () => {
    const client = new PaymentsClient({
      baseUrl: foreign.sandbox.baseUrl,
      apiKey: foreign.sandbox.apiKey,
      profile,
    });
    clients.push(client);
    const first = (await client.createOrder({
      idempotencyKey: "window-order-1",
      params: { offerId: "offer_usd_ngn" },
      body: { amount: 100, buyerDebitPaymentMethod: "WALLET", buyerCreditPaymentMethod: "WALLET" },
    })) as { orderId: string };
    await foreign.advance(DAY);
    const now = (await foreign.control("GET", "/health")).body.data.now;
    const since = shifted(now, -60_000);
    // biome-ignore lint/suspicious/noExplicitAny: the provider's shape, read field by field.
    const listed: any = await client.listOrders({ query: { since } });
    const requests = (await foreign.control("GET", "/requests")).body.data.requests;
    expect(requests[requests.length - 1].path).toBe(
      `/v1/order/my-orders?from=${encodeURIComponent(since)}`,
    );
    expect(listed.orders).toEqual([]);
    // biome-ignore lint/suspicious/noExplicitAny: the provider's shape, read field by field.
    const all: any = await client.listOrders({ query: { until: since } });
    expect(all.orders.map((o: { orderId: string }) => o.orderId)).toEqual([first.orderId]);
    const ours = await foreign.api("GET", "/order/my-orders", { query: { since } });
    expect(ours.status).toBe(400);
    expect(ours.body.message).toBe("since: unknown field");
  });
});
