import { afterEach, describe, expect, it } from "vitest";
import { TRON_ADDRESS } from "../fixtures/operation-examples.js";
import { useSandbox } from "../helpers/sandbox.js";

// Settlement far beyond any test's wall time: the tests see a hold or a PENDING state until they
// advance the sandbox's clock, however slow the machine.
const SETTLE = 10 * 60_000;
const sb = useSandbox({ settleDelayMs: SETTLE });
let n = 0;
const key = () => `money-${++n}`;

const bank = (amount: number, accountNumber = "0123456789") => ({
  amount,
  currency: "NGN",
  bankCode: "044",
  accountNumber,
  accountName: "Ada Obi",
  bankName: "Access Bank",
});
const momo = (amount: number, phoneNumber = "254712345678") => ({
  amount,
  currency: "KES",
  phoneNumber,
  network: "MPESA",
  iso2: "KE",
});

async function account(
  balances: Record<string, number> = { NGN: 10_000, KES: 10_000, USD: 1_000 },
) {
  const a = await sb.newAccount({ balances });
  const api = (method: string, path: string, o: Parameters<typeof sb.api>[2] = {}) =>
    sb.api(method, path, { key: a.apiKey, ...o });
  const info = async () =>
    (await sb.control("GET", "/accounts")).body.data.accounts.find(
      (x: { accountId: string }) => x.accountId === a.accountId,
    );
  return { ...a, api, info, wallet: (c: string) => sb.wallet(a.accountId, c) };
}

afterEach(async () => {
  expect(await sb.invariants()).toEqual({ ok: true, violations: [] });
});

describe("withdrawals to bank and mobile money", () => {
  it.each([
    ["bank", "/transaction/transfer/bank", bank(1_500.25), "NGN"],
    ["mobile money", "/transaction/transfer/momo", momo(1_500.25), "KES"],
  ] as const)(
    "%s: hold at once, PENDING, then SUCCESSFUL and the hold settles",
    async (_, path, body, currency) => {
      const a = await account();
      const res = await a.api("POST", path, { idem: key(), body });
      expect(res.body.data).toMatchObject({
        status: "PENDING",
        type: "DEBIT",
        amount: 1500.25,
        currency,
      });
      expect(await a.wallet(currency)).toMatchObject({
        availableBalance: 8_499.75,
        heldBalance: 1_500.25,
      });
      await sb.advance(SETTLE);
      const after = await a.api("GET", `/transactions/${res.body.data.transactionId}`);
      expect(after.body.data.status).toBe("SUCCESSFUL");
      expect(await a.wallet(currency)).toMatchObject({
        availableBalance: 8_499.75,
        heldBalance: 0,
      });
    },
  );

  it("refuses more than the available balance with a 400 that says so", async () => {
    const a = await account({ NGN: 100 });
    const res = await a.api("POST", "/transaction/transfer/bank", {
      idem: key(),
      body: bank(100.01),
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: "insufficient_funds",
      message: "insufficient NGN balance for this amount",
    });
    expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 100, heldBalance: 0 });
  });

  it("refuses a currency the account has no wallet in, naming the field", async () => {
    const a = await account({ NGN: 100 });
    const res = await a.api("POST", "/transaction/transfer/bank", {
      idem: key(),
      body: { ...bank(1), currency: "ZAR" },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      "currency: this account has no ZAR wallet (create one with POST /wallet)",
    );
  });

  const magic: [string, "bank" | "momo", string | number, string][] = [
    ["account number 0000000001 fails", "bank", "0000000001", "fail"],
    ["account number 0000000002 stays pending", "bank", "0000000002", "stay_pending"],
    ["account number 0000000003 is reversed after success", "bank", "0000000003", "reverse"],
    [
      "account number 0000000004 hits insufficient funds",
      "bank",
      "0000000004",
      "insufficient_funds",
    ],
    ["phone 0000000001 fails", "momo", "0000000001", "fail"],
    ["phone 0000000002 stays pending", "momo", "0000000002", "stay_pending"],
    ["phone 0000000003 is reversed after success", "momo", "0000000003", "reverse"],
    ["phone 0000000004 hits insufficient funds", "momo", "0000000004", "insufficient_funds"],
    ["amount 666.66 fails", "bank", 666.66, "fail"],
    ["amount 777.77 stays pending", "momo", 777.77, "stay_pending"],
    ["amount 888.88 is reversed after success", "bank", 888.88, "reverse"],
    ["amount 999.99 hits insufficient funds", "momo", 999.99, "insufficient_funds"],
  ];
  it.each(magic)("magic value: %s", async (_, kind, value, outcome) => {
    const a = await account();
    const currency = kind === "bank" ? "NGN" : "KES";
    const amount = typeof value === "number" ? value : 100;
    const body =
      kind === "bank"
        ? bank(amount, typeof value === "string" ? value : undefined)
        : momo(amount, typeof value === "string" ? value : undefined);
    const res = await a.api("POST", `/transaction/transfer/${kind}`, { idem: key(), body });
    if (outcome === "insufficient_funds") {
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("insufficient_funds");
      expect(await a.wallet(currency)).toMatchObject({ availableBalance: 10_000, heldBalance: 0 });
      return;
    }
    const id = res.body.data.transactionId;
    await sb.advance(SETTLE);
    const first = (await a.api("GET", `/transactions/${id}`)).body.data;
    if (outcome === "fail") {
      expect(first).toMatchObject({ status: "FAILED", failureReason: expect.any(String) });
      expect(await a.wallet(currency)).toMatchObject({ availableBalance: 10_000, heldBalance: 0 });
    }
    if (outcome === "stay_pending") {
      await sb.advance(3_600_000);
      expect((await a.api("GET", `/transactions/${id}`)).body.data.status).toBe("PENDING");
      expect(await a.wallet(currency)).toMatchObject({
        availableBalance: 10_000 - amount,
        heldBalance: amount,
      });
    }
    if (outcome === "reverse") {
      expect(first.status).toBe("SUCCESSFUL");
      expect(await a.wallet(currency)).toMatchObject({
        availableBalance: 10_000 - amount,
        heldBalance: 0,
      });
      await sb.advance(SETTLE);
      const reversed = (await a.api("GET", `/transactions/${id}`)).body.data;
      expect(reversed.reversedBy).toMatch(/^txn_/);
      const reversal = (await a.api("GET", `/transactions/${reversed.reversedBy}`)).body.data;
      expect(reversal).toMatchObject({
        type: "CREDIT",
        status: "SUCCESSFUL",
        amount,
        reversalOf: id,
      });
      expect(await a.wallet(currency)).toMatchObject({ availableBalance: 10_000, heldBalance: 0 });
    }
  });
});

describe("funding, wallets and virtual accounts", () => {
  it("fund wallet: a CREDIT, PENDING, then SUCCESSFUL and credited", async () => {
    const a = await account();
    const res = await a.api("POST", "/transaction/fund-wallet", {
      idem: key(),
      body: { amount: 250, currency: "USD", paymentMethod: "CARD" },
    });
    expect(res.body.data).toMatchObject({
      type: "CREDIT",
      status: "PENDING",
      channel: "fund_wallet",
    });
    expect(await a.wallet("USD")).toMatchObject({ availableBalance: 1_000 });
    await sb.advance(SETTLE);
    expect(
      (await a.api("GET", `/transactions/${res.body.data.transactionId}`)).body.data.status,
    ).toBe("SUCCESSFUL");
    expect(await a.wallet("USD")).toMatchObject({ availableBalance: 1_250 });
  });

  it("fund wallet: the magic amount 666.66 fails and credits nothing", async () => {
    const a = await account();
    const res = await a.api("POST", "/transaction/fund-wallet", {
      idem: key(),
      body: {
        amount: 666.66,
        currency: "USD",
        paymentMethod: "MOBILE_MONEY",
        phoneNumber: "23480000000",
      },
    });
    await sb.advance(SETTLE);
    expect(
      (await a.api("GET", `/transactions/${res.body.data.transactionId}`)).body.data.status,
    ).toBe("FAILED");
    expect(await a.wallet("USD")).toMatchObject({ availableBalance: 1_000 });
  });

  it("creates several fiat wallets, one per currency", async () => {
    const a = await account({ NGN: 1 });
    const ghs = await a.api("POST", "/wallet", { body: { currency: "GHS" } });
    const zar = await a.api("POST", "/wallet", {
      body: { currency: "ZAR", companyRegistrationNumber: "RC123" },
    });
    expect([ghs.status, zar.status]).toEqual([200, 200]);
    expect(ghs.body.data).toMatchObject({ currency: "GHS", availableBalance: 0, heldBalance: 0 });
    const again = await a.api("POST", "/wallet", { body: { currency: "GHS" } });
    expect(again.status).toBe(400);
    expect(again.body.message).toBe("currency: this account already has a GHS wallet");
    expect((await a.info()).wallets.map((w: { currency: string }) => w.currency).sort()).toEqual([
      "GHS",
      "NGN",
      "ZAR",
    ]);
  });

  it("virtual account: one-time, credits the NGN wallet on an inbound transfer", async () => {
    const a = await account({ NGN: 0 });
    const va = (
      await a.api("POST", "/transaction/collection/virtual-account", {
        body: { amount: 5_000, validFor: 30 },
      })
    ).body.data;
    expect(va).toMatchObject({ status: "ACTIVE", currency: "NGN", amount: 5_000 });
    const wrong = await sb.control("POST", `/virtual-accounts/${va.accountNumber}/transfers`, {
      body: { amount: 4_000 },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toBe("amount: must equal the expected 5000");
    const paid = await sb.control("POST", `/virtual-accounts/${va.accountNumber}/transfers`, {
      body: { amount: 5_000 },
    });
    expect(paid.body.data).toMatchObject({
      type: "CREDIT",
      status: "SUCCESSFUL",
      channel: "virtual_account",
    });
    expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 5_000 });
    const twice = await sb.control("POST", `/virtual-accounts/${va.accountNumber}/transfers`, {
      body: { amount: 5_000 },
    });
    expect(twice.body.message).toBe("accountNumber: virtual account is USED");
  });

  it("virtual account: expires after validFor minutes", async () => {
    const a = await account({ NGN: 0 });
    const va = (
      await a.api("POST", "/transaction/collection/virtual-account", {
        body: { amount: 10, validFor: 1 },
      })
    ).body.data;
    await sb.advance(60_000);
    const late = await sb.control("POST", `/virtual-accounts/${va.accountNumber}/transfers`, {
      body: { amount: 10 },
    });
    expect(late.status).toBe(400);
    expect(late.body.message).toBe("accountNumber: virtual account is EXPIRED");
    expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 0 });
  });
});

describe("exchanges and payment links", () => {
  it("an order debits one wallet and credits the other at the offer's rate", async () => {
    const a = await account({ USD: 1_000, NGN: 0 });
    const offers = (await sb.control("GET", "/offers")).body.data.offers;
    const offer = offers.find((o: { offerId: string }) => o.offerId === "offer_usd_ngn");
    const res = await a.api("POST", "/offer/offer_usd_ngn/order", {
      idem: key(),
      body: { amount: 100, buyerDebitPaymentMethod: "WALLET", buyerCreditPaymentMethod: "WALLET" },
    });
    expect(res.body.data).toMatchObject({
      status: "PENDING",
      fromCurrency: "USD",
      toCurrency: "NGN",
      rate: offer.rate,
    });
    expect(await a.wallet("USD")).toMatchObject({ availableBalance: 900, heldBalance: 100 });
    await sb.advance(SETTLE);
    const done = (await a.api("GET", `/order/${res.body.data.orderId}`)).body.data;
    expect(done.status).toBe("COMPLETED");
    expect(await a.wallet("USD")).toMatchObject({ availableBalance: 900, heldBalance: 0 });
    expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 100 * offer.rate });
    expect(
      (await a.api("GET", "/order/my-orders")).body.data.orders.map(
        (o: { orderId: string }) => o.orderId,
      ),
    ).toEqual([res.body.data.orderId]);
  });

  it("enforces the offer's minimum and maximum, and 404s an unknown offer", async () => {
    const a = await account({ USD: 1_000_000 });
    const body = (amount: number) => ({
      amount,
      buyerDebitPaymentMethod: "WALLET",
      buyerCreditPaymentMethod: "WALLET",
    });
    const low = await a.api("POST", "/offer/offer_usd_ngn/order", {
      idem: key(),
      body: body(9.99),
    });
    const high = await a.api("POST", "/offer/offer_usd_ngn/order", {
      idem: key(),
      body: body(100_000.01),
    });
    const none = await a.api("POST", "/offer/offer_xxx/order", { idem: key(), body: body(10) });
    expect(low.body.message).toBe("amount: at least 10 USD for offer offer_usd_ngn");
    expect(high.body.message).toBe("amount: at most 100000 USD for offer offer_usd_ngn");
    expect(none.status).toBe(404);
  });

  it("a magic amount fails the order and releases the hold", async () => {
    const a = await account({ USD: 1_000 });
    const res = await a.api("POST", "/offer/offer_usd_ngn/order", {
      idem: key(),
      body: {
        amount: 666.66,
        buyerDebitPaymentMethod: "WALLET",
        buyerCreditPaymentMethod: "WALLET",
      },
    });
    await sb.advance(SETTLE);
    expect((await a.api("GET", `/order/${res.body.data.orderId}`)).body.data.status).toBe("FAILED");
    expect(await a.wallet("USD")).toMatchObject({ availableBalance: 1_000, heldBalance: 0 });
  });

  it("a payment link's token makes one order; a declined link makes none", async () => {
    const a = await account({ USD: 1_000 });
    const [link] = (await a.info()).paymentLinks;
    const body = {
      amount: 20,
      buyerDebitPaymentMethod: "CARD",
      buyerCreditPaymentMethod: "WALLET",
    };
    const order = await a.api("POST", "/offer/offer_usd_ngn/payment-request/order", {
      idem: key(),
      query: { token: link.token },
      body,
    });
    expect(order.body.data).toMatchObject({ paymentLinkToken: link.token });
    const reuse = await a.api("POST", "/offer/offer_usd_ngn/payment-request/order", {
      idem: key(),
      query: { token: link.token },
      body,
    });
    expect(reuse.body.message).toBe("token: payment link is USED");

    const fresh = (
      await sb.control("POST", "/payment-links", {
        body: { accountId: a.accountId, offerId: "offer_usd_ngn" },
      })
    ).body.data;
    const declined = await a.api("POST", "/payment-link/decline", {
      query: { token: fresh.token },
      body: { reason: "not mine" },
    });
    expect(declined.body.data).toEqual({
      token: fresh.token,
      status: "DECLINED",
      reason: "not mine",
    });
    const after = await a.api("POST", "/offer/offer_usd_ngn/payment-request/order", {
      idem: key(),
      query: { token: fresh.token },
      body,
    });
    expect(after.body.message).toBe("token: payment link is DECLINED");
    const wrongOffer = (
      await sb.control("POST", "/payment-links", {
        body: { accountId: a.accountId, offerId: "offer_usd_kes" },
      })
    ).body.data;
    const mismatch = await a.api("POST", "/offer/offer_usd_ngn/payment-request/order", {
      idem: key(),
      query: { token: wrongOffer.token },
      body,
    });
    expect(mismatch.body.message).toBe("token: payment link belongs to offer offer_usd_kes");
  });
});

describe("stable sub-accounts", () => {
  const withdrawal = (amount: string, network = "polygon", currency = "USDT") => ({
    amount,
    toAddress: TRON_ADDRESS,
    currency,
    network,
  });

  it("withdraws with a CHARGES entry for the network fee; balances, history and lookup agree", async () => {
    const a = await account();
    const [sub] = (await a.info()).subAccountIds;
    const res = await a.api("POST", `/stable-currency/sub-accounts/${sub}/withdraw`, {
      idem: key(),
      body: withdrawal("10.5"),
    });
    expect(res.body.data).toMatchObject({
      type: "WITHDRAWAL",
      status: "PENDING",
      amount: "10.500000",
      network: "polygon",
    });
    const balance = (await a.api("GET", `/stable-currency/sub-accounts/${sub}/balance`)).body.data;
    expect(balance.balances).toHaveLength(8);
    expect(balance.balances).toContainEqual({
      currency: "USDT",
      network: "polygon",
      balance: "99989.400000",
    });
    expect(balance.balances).toContainEqual({
      currency: "USDC",
      network: "polygon",
      balance: "100000.000000",
    });
    const charges = (
      await a.api("GET", "/stable-currency/transactions", { query: { type: "CHARGES" } })
    ).body.data;
    expect(charges.transactions).toEqual([
      expect.objectContaining({
        type: "CHARGES",
        amount: "0.100000",
        relatedTransactionId: res.body.data.transactionId,
      }),
    ]);
    await sb.advance(SETTLE);
    const looked = await a.api(
      "GET",
      `/stable-currency/sub-accounts/${sub}/transaction/${res.body.data.transactionId}`,
    );
    expect(looked.body.data.status).toBe("SUCCESSFUL");
  });

  it("a failed withdrawal is reversed, amount and fee returned", async () => {
    const a = await account();
    const [sub] = (await a.info()).subAccountIds;
    await a.api("POST", `/stable-currency/sub-accounts/${sub}/withdraw`, {
      idem: key(),
      body: withdrawal("666.66", "solana"),
    });
    await sb.advance(SETTLE);
    const reversals = (
      await a.api("GET", "/stable-currency/transactions", { query: { type: "REVERSAL" } })
    ).body.data;
    expect(reversals.transactions).toEqual([
      expect.objectContaining({ amount: "666.670000", network: "solana" }),
    ]);
    const balance = (await a.api("GET", `/stable-currency/sub-accounts/${sub}/balance`)).body.data;
    expect(balance.balances).toContainEqual({
      currency: "USDT",
      network: "solana",
      balance: "100000.000000",
    });
  });

  it("refuses more than the balance plus fee, and allows exactly the balance", async () => {
    const a = await account();
    const [sub] = (await a.info()).subAccountIds;
    const exact = await a.api("POST", `/stable-currency/sub-accounts/${sub}/withdraw`, {
      idem: key(),
      body: withdrawal("99999.99", "solana", "USDC"),
    });
    expect(exact.status).toBe(200);
    const res = await a.api("POST", `/stable-currency/sub-accounts/${sub}/withdraw`, {
      idem: key(),
      body: withdrawal("99999.96", "base", "USDC"),
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      "insufficient USDC on base for 99999.96 plus the 0.05 network fee",
    );
  });

  it("filters and pages the history", async () => {
    const a = await account();
    const [sub] = (await a.info()).subAccountIds;
    for (let i = 0; i < 5; i += 1) {
      await a.api("POST", `/stable-currency/sub-accounts/${sub}/withdraw`, {
        idem: key(),
        body: withdrawal("1", i % 2 ? "base" : "arbitrum", "USDC"),
      });
    }
    const page = (q: Record<string, string | number>) =>
      a.api("GET", "/stable-currency/transactions", { query: q });
    expect((await page({ type: "WITHDRAWAL" })).body.data.total).toBe(5);
    expect((await page({ network: "base", type: "WITHDRAWAL" })).body.data.total).toBe(2);
    expect((await page({ currency: "USDT" })).body.data.total).toBe(0);
    const second = (await page({ page: 2, pageSize: 3 })).body.data;
    expect(second).toMatchObject({ page: 2, pageSize: 3, total: 10 });
    expect(second.transactions).toHaveLength(3);
  });
});

describe("lists, rates and identity", () => {
  it("lists transactions with sort and filters", async () => {
    const a = await account();
    for (const amount of [30, 10, 20])
      await a.api("POST", "/transaction/transfer/bank", { idem: key(), body: bank(amount) });
    await a.api("POST", "/transaction/fund-wallet", {
      idem: key(),
      body: { amount: 5, currency: "NGN", paymentMethod: "CARD" },
    });
    const list = (q: Record<string, string>) =>
      a
        .api("GET", "/transactions", { query: q })
        .then((r) => r.body.data.transactions.map((t: { amount: number }) => t.amount));
    expect(await list({ sortBy: "amount", sortDirection: "asc" })).toEqual([5, 10, 20, 30]);
    expect(await list({ sortBy: "amount", sortDirection: "desc", type: "DEBIT" })).toEqual([
      30, 20, 10,
    ]);
    expect(await list({ type: "CREDIT" })).toEqual([5]);
    expect(await list({ status: "SUCCESSFUL" })).toEqual([]);
    await sb.advance(SETTLE);
    expect((await list({ status: "SUCCESSFUL" })).sort()).toEqual([10, 20, 30, 5]);
    expect(await list({ currency: "KES" })).toEqual([]);
  });

  it("rates come from a fixed table", async () => {
    const q = {
      fromCurrency: "USD",
      toCurrency: "NGN",
      fromCurrencyIso2: "USAA",
      toCurrencyIso2: "NGAA",
    };
    const rate = await sb.api("GET", "/utility/payment-link-rate", { query: q });
    expect(rate.body.data).toEqual({ fromCurrency: "USD", toCurrency: "NGN", rate: 1500 });
    const converted = await sb.api("GET", "/utility/exchange-rate", {
      query: { ...q, fromCurrency: "GBP", amount: 10 },
    });
    expect(converted.body.data).toEqual({
      fromCurrency: "GBP",
      toCurrency: "NGN",
      rate: 1898.734177,
      amount: 10,
      convertedAmount: 18987.34,
    });
    const sle = await sb.api("GET", "/utility/payment-link-rate", {
      query: { ...q, toCurrency: "SLE" },
    });
    expect(sle.body.data.rate).toBe(22.5);
  });

  it("identity verification returns a verification reference", async () => {
    const res = await sb.api("GET", "/utility/provider/identity-verification/initiate", {
      body: { value: "22212345678" },
    });
    expect(res.body.data).toEqual({
      verificationReference: expect.stringMatching(/^idv_/),
      status: "INITIATED",
    });
    const missing = await sb.api("GET", "/utility/provider/identity-verification/initiate");
    expect(missing.body.message).toBe("body: required");
  });
});
