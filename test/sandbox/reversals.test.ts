import { afterEach, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.js";
import { TRON_ADDRESS } from "../fixtures/operation-examples.js";
import { type TestSandbox, useSandbox } from "../helpers/sandbox.js";
import { type SandboxAccount, sandboxAccount } from "../helpers/sandbox-account.js";

// Nothing settles or reverses by wall time: the tests move the sandbox's clock. Its clock is
// wall time plus what was advanced, so "just before" leaves a minute for the test's own time.
const SETTLE = 10 * 60_000;
const DAY = 24 * 3600_000;
const MINUTE = 60_000;

const checkInvariants = (sb: TestSandbox) =>
  afterEach(async () => {
    expect(await sb.invariants()).toEqual({ ok: true, violations: [] });
  });

const reverse = (sb: TestSandbox, id: unknown, body?: unknown) =>
  sb.control("POST", `/transactions/${id}/reverse`, body === undefined ? {} : { body });

describe("magic-value reversals, days after success", () => {
  const sb = useSandbox({ settleDelayMs: SETTLE, reverseAfterMs: 3 * DAY });
  checkInvariants(sb);

  it("0000000003: a reversing transaction, reverseAfterMs after success", async () => {
    const a = await sandboxAccount(sb);
    const paid = await a.pay(250, "0000000003");
    await sb.advance(SETTLE);
    expect((await a.lookUp(paid.transactionId as string)).body.data.status).toBe("SUCCESSFUL");
    await sb.advance(3 * DAY - MINUTE);
    const before = (await a.lookUp(paid.transactionId as string)).body.data;
    expect(before.reversedBy).toBeUndefined();
    expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 99_750 });
    await sb.advance(MINUTE);
    const after = (await a.lookUp(paid.transactionId as string)).body.data;
    expect(after).toMatchObject({
      status: "SUCCESSFUL",
      reversedBy: expect.stringMatching(/^txn_/),
    });
    expect((await a.lookUp(after.reversedBy)).body.data).toMatchObject({
      type: "CREDIT",
      status: "SUCCESSFUL",
      amount: 250,
      reversalOf: paid.transactionId,
    });
    expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 100_000, heldBalance: 0 });
  });

  it.each([
    ["account number 0000000005", 250, "0000000005"],
    ["amount 555.55", 555.55, undefined],
  ] as const)("%s: returned as a status change, no new transaction", async (_, amount, to) => {
    const a = await sandboxAccount(sb);
    const paid = await a.pay(amount, to);
    const id = paid.transactionId as string;
    await sb.advance(SETTLE + 3 * DAY - MINUTE);
    expect((await a.lookUp(id)).body.data.status).toBe("SUCCESSFUL");
    expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 100_000 - amount });
    await sb.advance(MINUTE);
    const returned = (await a.lookUp(id)).body.data;
    expect(returned).toMatchObject({ transactionId: id, status: "REVERSED", amount });
    expect(returned.reversedBy).toBeUndefined();
    const listed = await a.list();
    expect(listed.map((t) => [t.transactionId, t.status])).toEqual([[id, "REVERSED"]]);
    expect(await a.list({ status: "SUCCESSFUL" })).toEqual([]);
    expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 100_000, heldBalance: 0 });
    const ledger = (await sb.control("GET", "/ledger", { query: { accountId: a.accountId } })).body
      .data.entries;
    expect(ledger.at(-1)).toMatchObject({
      transactionId: id,
      effectId: id,
      memo: `returned: ${id} shows REVERSED`,
      amount: amount.toFixed(2),
    });
  });

  it("one advance of days settles and reverses, as if each had happened on time", async () => {
    const a = await sandboxAccount(sb);
    const paid = await a.pay(75, "0000000003");
    await sb.advance(5 * DAY);
    expect((await a.lookUp(paid.transactionId as string)).body.data.reversedBy).toMatch(/^txn_/);
    expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 100_000, heldBalance: 0 });
  });

  it("a funding returned as a status change takes its credit back", async () => {
    const a = await sandboxAccount(sb);
    const res = await a.api("POST", "/transaction/fund-wallet", {
      idem: `fund-return-${a.accountId}`,
      body: { amount: 40, currency: "USD", paymentMethod: "CARD", phoneNumber: "0000000005" },
    });
    await sb.advance(SETTLE);
    expect(await a.wallet("USD")).toMatchObject({ availableBalance: 10_040 });
    await sb.advance(3 * DAY);
    expect((await a.lookUp(res.body.data.transactionId)).body.data.status).toBe("REVERSED");
    expect(await a.wallet("USD")).toMatchObject({ availableBalance: 10_000 });
  });
});

describe("reversalStyle and reversedStatus", () => {
  const sb = useSandbox({
    settleDelayMs: SETTLE,
    reversalStyle: "status",
    reversedStatus: "RETURNED",
  });
  checkInvariants(sb);

  it("0000000003 and 888.88 take the sandbox's style and word; the delay defaults to settleDelayMs", async () => {
    const a = await sandboxAccount(sb);
    const byAccount = await a.pay(100, "0000000003");
    const byAmount = await a.pay(888.88);
    await sb.advance(2 * SETTLE - MINUTE);
    expect((await a.list()).map((t) => t.status)).toEqual(["SUCCESSFUL", "SUCCESSFUL"]);
    await sb.advance(MINUTE);
    const listed = await a.list({ sortBy: "amount", sortDirection: "asc" });
    expect(listed.map((t) => [t.transactionId, t.status])).toEqual([
      [byAccount.transactionId, "RETURNED"],
      [byAmount.transactionId, "RETURNED"],
    ]);
  });

  it("startSandbox refuses a return word the spec or the default profile already means", async () => {
    for (const word of ["FAILED", "completed", "two words", "", "x".repeat(65)]) {
      await expect(startSandbox({ reversedStatus: word })).rejects.toThrow(
        /reversedStatus must be 1 to 64 letters/,
      );
    }
  });
});

describe("POST /__sandbox/transactions/:id/reverse", () => {
  const sb = useSandbox({ settleDelayMs: SETTLE });
  checkInvariants(sb);
  const paidOut = async (a: SandboxAccount, amount = 300) => {
    const paid = await a.pay(amount);
    await sb.advance(SETTLE);
    return paid.transactionId as string;
  };

  it("at once, as a reversing transaction (the default)", async () => {
    const a = await sandboxAccount(sb);
    const id = await paidOut(a);
    const requestsBefore = (await sb.control("GET", "/requests")).body.data.requests.length;
    const res = await reverse(sb, id);
    // Control calls are not requests to the Payments API: the request log does not count them.
    expect((await sb.control("GET", "/requests")).body.data.requests).toHaveLength(requestsBefore);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { edit, transaction, reversal } = res.body.data;
    expect(edit).toMatchObject({
      seq: expect.any(Number),
      accountId: a.accountId,
      transactionId: id,
      action: "reversed",
      as: "transaction",
      reversalId: reversal.transactionId,
    });
    expect(transaction).toMatchObject({ status: "SUCCESSFUL", reversedBy: reversal.transactionId });
    expect(reversal).toMatchObject({
      type: "CREDIT",
      status: "SUCCESSFUL",
      amount: 300,
      reversalOf: id,
    });
    expect((await a.lookUp(id)).body.data.reversedBy).toBe(reversal.transactionId);
    expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 100_000, heldBalance: 0 });
  });

  it("at once, as a status change", async () => {
    const a = await sandboxAccount(sb);
    const id = await paidOut(a);
    const res = await reverse(sb, id, { as: "status" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.reversal).toBeUndefined();
    expect(res.body.data.edit).toMatchObject({ action: "reversed", as: "status" });
    expect(res.body.data.edit.reversalId).toBeUndefined();
    expect((await a.lookUp(id)).body.data.status).toBe("REVERSED");
    expect(await a.list()).toHaveLength(1);
    expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 100_000 });
  });

  it.each(["transaction", "status"] as const)(
    "later (afterMs, on the sandbox's clock), as %s; the edit log says when and what",
    async (as) => {
      const a = await sandboxAccount(sb);
      const id = await paidOut(a);
      const now = Date.parse((await sb.control("GET", "/health")).body.data.now);
      const res = await reverse(sb, id, { afterMs: 2 * DAY, as });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const scheduled = res.body.data.edit;
      expect(scheduled).toMatchObject({ action: "reversal_scheduled", as, transactionId: id });
      expect(Date.parse(scheduled.dueAt) - now).toBeGreaterThanOrEqual(2 * DAY);
      expect(Date.parse(scheduled.dueAt) - now).toBeLessThan(2 * DAY + 60_000);
      expect(res.body.data.transaction.status).toBe("SUCCESSFUL");
      const again = await reverse(sb, id);
      expect(again.status).toBe(400);
      expect(again.body.message).toContain(`already has a reversal due at ${scheduled.dueAt}`);

      await sb.advance(2 * DAY);
      const looked = (await a.lookUp(id)).body.data;
      expect(looked.status).toBe(as === "status" ? "REVERSED" : "SUCCESSFUL");
      expect(looked.reversedBy === undefined).toBe(as === "status");
      expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 100_000 });
      const edits = (await sb.control("GET", "/edits", { query: { accountId: a.accountId } })).body
        .data.edits;
      expect(edits.map((e: { action: string }) => e.action)).toEqual([
        "reversal_scheduled",
        "reversed",
      ]);
      expect(edits[1].seq).toBeGreaterThan(edits[0].seq);
      if (as === "transaction") expect(edits[1].reversalId).toBe(looked.reversedBy);
      const later = (
        await sb.control("GET", "/edits", {
          query: { accountId: a.accountId, afterSeq: edits[0].seq },
        })
      ).body.data.edits;
      expect(later).toEqual([edits[1]]);
    },
  );

  it("refuses what cannot be reversed, naming the transaction and why; nothing changes", async () => {
    const a = await sandboxAccount(sb);
    const funded = await a.api("POST", "/transaction/fund-wallet", {
      idem: `fund-${a.accountId}`,
      body: { amount: 10, currency: "USD", paymentMethod: "CARD" },
    });
    const failed = await a.pay(20, "0000000001");
    const reversed = await paidOut(a, 40);
    await reverse(sb, reversed);
    const returned = await paidOut(a, 41);
    await reverse(sb, returned, { as: "status" });
    // Its own reversal is due a settleDelayMs after success.
    const magicId = (await a.pay(31, "0000000003")).transactionId;
    await sb.advance(SETTLE);
    const pending = await a.pay(11);
    const cases: [unknown, string][] = [
      [pending.transactionId, "is PENDING; only a SUCCESSFUL transaction can be reversed"],
      [failed.transactionId, "is FAILED; only a SUCCESSFUL transaction can be reversed"],
      [funded.body.data.transactionId, "is a CREDIT; only a DEBIT can be reversed"],
      [reversed, "is already reversed by txn_"],
      [returned, "is already returned (its status shows REVERSED)"],
      [magicId, "already has a reversal due at"],
    ];
    const ledgerBefore = (await sb.control("GET", "/ledger")).body.data.entries.length;
    for (const [id, rule] of cases) {
      const res = await reverse(sb, id);
      expect(res.status, String(id)).toBe(400);
      expect(res.body).toMatchObject({ success: false, code: "validation_error" });
      expect(res.body.message).toContain(`transactionId: ${id} ${rule}`);
    }
    expect((await sb.control("GET", "/ledger")).body.data.entries).toHaveLength(ledgerBefore);
  });

  it("404 for an unknown transaction, 400 for a stable-currency one or an order", async () => {
    const a = await sandboxAccount(sb);
    const missing = await reverse(sb, "txn_999999");
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe("transaction txn_999999 not found");
    const accounts = (await sb.control("GET", "/accounts")).body.data.accounts;
    const sub = accounts.find((x: { accountId: string }) => x.accountId === a.accountId)
      .subAccountIds[0];
    const stable = await a.api("POST", `/stable-currency/sub-accounts/${sub}/withdraw`, {
      idem: `stable-${a.accountId}`,
      body: { amount: "1", toAddress: TRON_ADDRESS, currency: "USDT", network: "base" },
    });
    const order = await a.api("POST", "/offer/offer_usd_ngn/order", {
      idem: `order-${a.accountId}`,
      body: { amount: 10, buyerDebitPaymentMethod: "WALLET", buyerCreditPaymentMethod: "WALLET" },
    });
    for (const id of [stable.body.data.transactionId, order.body.data.orderId]) {
      const res = await reverse(sb, id);
      expect(res.status).toBe(400);
      expect(res.body.message).toBe(
        `transactionId: ${id} is a stable-currency transaction or an order; only fiat transactions (spec 4.11) can be changed here`,
      );
    }
  });

  it("refuses a bad body naming the field", async () => {
    const a = await sandboxAccount(sb);
    const id = await paidOut(a);
    const cases: [unknown, string][] = [
      [{ as: "later" }, 'as: must be one of "transaction", "status"'],
      [{ afterMs: -1 }, "afterMs: at least 0"],
      [{ afterMs: 1.5 }, "afterMs: must be a whole number"],
      [{ afterMs: 366 * DAY }, "afterMs: at most 31536000000"],
      [{ after: 5 }, "after: unknown field"],
    ];
    for (const [body, message] of cases) {
      const res = await reverse(sb, id, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toBe(message);
    }
    expect((await a.lookUp(id)).body.data.reversedBy).toBeUndefined();
  });
});
