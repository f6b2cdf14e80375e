import { afterEach, describe, expect, it } from "vitest";
import { useSandbox } from "../helpers/sandbox.js";
import { type SandboxAccount, sandboxAccount } from "../helpers/sandbox-account.js";

// Nothing settles by wall time: the tests move the sandbox's clock.
const SETTLE = 10 * 60_000;
const DAY = 24 * 3600_000;
const sb = useSandbox({ settleDelayMs: SETTLE });

afterEach(async () => {
  expect(await sb.invariants()).toEqual({ ok: true, violations: [] });
});

const edit = (id: unknown, body: unknown) => sb.control("PATCH", `/transactions/${id}`, { body });
const externalDebit = (accountId: string, body: unknown) =>
  sb.control("POST", `/accounts/${accountId}/external-debits`, { body });
const ledgerOf = async (accountId: string) =>
  (await sb.control("GET", "/ledger", { query: { accountId } })).body.data.entries;
const editsOf = async (accountId: string) =>
  (await sb.control("GET", "/edits", { query: { accountId } })).body.data.edits;

/** A payout settled to its outcome (a magic account number forces one). */
async function settled(a: SandboxAccount, amount: number, accountNumber?: string) {
  const paid = await a.pay(amount, accountNumber);
  await sb.advance(SETTLE);
  return paid.transactionId as string;
}

describe("PATCH /__sandbox/transactions/:id: the provider's books, changed by hand", () => {
  it("FAILED to SUCCESSFUL (the provider in fact paid): the money leaves, the edit is kept", async () => {
    const a = await sandboxAccount(sb);
    const id = await settled(a, 500, "0000000001");
    expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 100_000 });
    const res = await edit(id, { status: "SUCCESSFUL" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.edit).toMatchObject({
      action: "edit",
      accountId: a.accountId,
      transactionId: id,
      before: { status: "FAILED", amount: 500, currency: "NGN", hidden: false },
      after: { status: "SUCCESSFUL", amount: 500, currency: "NGN", hidden: false },
    });
    const looked = (await a.lookUp(id)).body.data;
    expect(looked.status).toBe("SUCCESSFUL");
    expect(looked.failureReason).toBeUndefined();
    expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 99_500, heldBalance: 0 });
    expect((await ledgerOf(a.accountId)).at(-1)).toMatchObject({
      transactionId: id,
      effectId: null,
      idempotencyKey: null,
      memo: "control: status FAILED -> SUCCESSFUL",
      amount: "-500.00",
    });
    expect(await editsOf(a.accountId)).toEqual([res.body.data.edit]);
  });

  it("SUCCESSFUL to FAILED: the money comes back and the failure has a reason", async () => {
    const a = await sandboxAccount(sb);
    const id = await settled(a, 500);
    await edit(id, { status: "FAILED" });
    expect((await a.lookUp(id)).body.data).toMatchObject({
      status: "FAILED",
      failureReason: expect.stringContaining("control API"),
    });
    expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 100_000 });
  });

  it("amount and currency: the wallets move by the difference", async () => {
    const a = await sandboxAccount(sb);
    const id = await settled(a, 500);
    await edit(id, { amount: 450.5 });
    expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 99_549.5 });
    const res = await edit(id, { currency: "USD", amount: 30 });
    expect(res.body.data.edit.after).toMatchObject({ amount: 30, currency: "USD" });
    expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 100_000 });
    expect(await a.wallet("USD")).toMatchObject({ availableBalance: 9_970 });
    expect((await a.lookUp(id)).body.data).toMatchObject({ amount: 30, currency: "USD" });
  });

  it("refuses what the books cannot hold, whole: no wallet, too little money", async () => {
    const a = await sandboxAccount(sb, { NGN: 1_000 });
    const id = await settled(a, 500);
    const ledger = (await ledgerOf(a.accountId)).length;
    const noWallet = await edit(id, { currency: "EUR" });
    expect(noWallet.status).toBe(400);
    expect(noWallet.body.message).toBe(`currency: account ${a.accountId} has no EUR wallet`);
    const tooMuch = await edit(id, { amount: 1_000.01, status: "SUCCESSFUL" });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.code).toBe("insufficient_funds");
    expect((await a.lookUp(id)).body.data).toMatchObject({ amount: 500, status: "SUCCESSFUL" });
    expect(await ledgerOf(a.accountId)).toHaveLength(ledger);
    expect(await editsOf(a.accountId)).toEqual([]);
  });

  it("hidden: gone from lookups and lists as if the provider never had it, and back", async () => {
    const a = await sandboxAccount(sb);
    const kept = await settled(a, 100);
    const id = await settled(a, 500);
    const hide = await edit(id, { hidden: true });
    expect(hide.body.data.transaction).toMatchObject({ transactionId: id, hidden: true });
    const missing = await a.lookUp(id);
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe(`transaction ${id} not found`);
    expect((await a.list()).map((t) => t.transactionId)).toEqual([kept]);
    expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 99_900 });
    const reverse = await sb.control("POST", `/transactions/${id}/reverse`, {});
    expect(reverse.status).toBe(400);
    expect(reverse.body.message).toContain("is hidden");
    await edit(id, { hidden: false });
    expect((await a.lookUp(id)).body.data.status).toBe("SUCCESSFUL");
    expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 99_400 });
  });

  it("a PENDING payout edited settles with what the edit says; hidden, it does not settle", async () => {
    const a = await sandboxAccount(sb);
    const amended = (await a.pay(500)).transactionId as string;
    const hidden = (await a.pay(200)).transactionId as string;
    await edit(amended, { amount: 300 });
    await edit(hidden, { hidden: true });
    expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 99_700, heldBalance: 300 });
    await sb.advance(SETTLE);
    expect((await a.lookUp(amended)).body.data).toMatchObject({
      status: "SUCCESSFUL",
      amount: 300,
    });
    expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 99_700, heldBalance: 0 });
    await edit(hidden, { hidden: false });
    expect((await a.lookUp(hidden)).body.data.status).toBe("PENDING");
  });

  it("createdAt moves a transaction in or out of a list's window", async () => {
    const a = await sandboxAccount(sb);
    const id = await settled(a, 100);
    const res = await edit(id, { createdAt: "2025-01-31T01:00:00+01:00" });
    expect(res.body.data.transaction.createdAt).toBe("2025-01-31T00:00:00.000Z");
    expect(await a.list({ since: "2025-02-01T00:00:00Z" })).toEqual([]);
    expect((await a.list({ until: "2025-02-01T00:00:00Z" })).map((t) => t.transactionId)).toEqual([
      id,
    ]);
  });

  it("a reversal asked for later is skipped when an edit leaves nothing to reverse", async () => {
    const a = await sandboxAccount(sb);
    const id = await settled(a, 100);
    await sb.control("POST", `/transactions/${id}/reverse`, { body: { afterMs: DAY } });
    await edit(id, { status: "FAILED" });
    await sb.advance(DAY);
    expect((await a.list()).map((t) => [t.transactionId, t.status])).toEqual([[id, "FAILED"]]);
    const edits = await editsOf(a.accountId);
    expect(edits.map((e: { action: string }) => e.action)).toEqual([
      "reversal_scheduled",
      "edit",
      "reversal_skipped",
    ]);
    expect(edits[2].reason).toBe("it is FAILED; only a SUCCESSFUL transaction can be reversed");
    expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 100_000 });
  });

  it("refuses a bad edit naming the field, and an unknown transaction with a 404", async () => {
    const a = await sandboxAccount(sb);
    const id = await settled(a, 100);
    const cases: [unknown, string][] = [
      [{}, "give at least one of status, amount, currency, createdAt, hidden"],
      [
        { status: "REVERSED" },
        'status: must be one of "SUCCESSFUL", "PENDING", "FAILED", "CANCELLED"',
      ],
      [{ amount: 0 }, "amount: greater than 0"],
      [{ amount: 1.005 }, "amount: at most 2 decimal places"],
      [{ hidden: "yes" }, "hidden: must be a boolean, got string"],
      [{ createdAt: "yesterday" }, "createdAt: must be an ISO 8601 date and time with an offset"],
      [{ note: "x" }, "note: unknown field"],
    ];
    for (const [body, message] of cases) {
      const res = await edit(id, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toContain(message);
    }
    const unknown = await edit("txn_999999", { status: "FAILED" });
    expect(unknown.status).toBe(404);
    expect(await editsOf(a.accountId)).toEqual([]);
  });
});

describe("POST /__sandbox/accounts/:id/external-debits: another system on the same account", () => {
  it("a SUCCESSFUL bank DEBIT by default, under no key, never in the request log", async () => {
    const a = await sandboxAccount(sb);
    const requests = (await sb.control("GET", "/requests")).body.data.requests.length;
    const res = await externalDebit(a.accountId, { amount: 1_234.56, currency: "NGN" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { transaction, edit: entry } = res.body.data;
    expect(transaction).toMatchObject({
      transactionId: expect.stringMatching(/^txn_/),
      type: "DEBIT",
      status: "SUCCESSFUL",
      channel: "bank",
      amount: 1_234.56,
      currency: "NGN",
    });
    expect(entry).toMatchObject({
      action: "external_debit",
      transactionId: transaction.transactionId,
    });
    expect((await sb.control("GET", "/requests")).body.data.requests).toHaveLength(requests);
    expect((await a.list()).map((t) => t.transactionId)).toEqual([transaction.transactionId]);
    expect((await ledgerOf(a.accountId)).at(-1)).toMatchObject({
      transactionId: transaction.transactionId,
      idempotencyKey: null,
      memo: "control: external debit (another system)",
      amount: "-1234.56",
    });
    expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 98_765.44 });
  });

  it("takes a status, channel, narration and a creation time, which the list windows see", async () => {
    const a = await sandboxAccount(sb);
    const pending = await externalDebit(a.accountId, {
      amount: 100,
      currency: "NGN",
      status: "PENDING",
      channel: "mobile_money",
      narration: "payroll run 7",
      createdAt: "2025-03-01T12:00:00+01:00",
    });
    expect(pending.body.data.transaction).toMatchObject({
      status: "PENDING",
      channel: "mobile_money",
      narration: "payroll run 7",
      createdAt: "2025-03-01T11:00:00.000Z",
    });
    const failed = await externalDebit(a.accountId, {
      amount: 50,
      currency: "USD",
      status: "FAILED",
    });
    expect(failed.body.data.transaction.failureReason).toEqual(expect.any(String));
    expect(await a.wallet("NGN")).toMatchObject({ availableBalance: 99_900, heldBalance: 100 });
    expect(await a.wallet("USD")).toMatchObject({ availableBalance: 10_000 });
    const inMarch = await a.list({
      since: "2025-03-01T00:00:00Z",
      until: "2025-04-01T00:00:00Z",
    });
    expect(inMarch.map((t) => t.transactionId)).toEqual([
      pending.body.data.transaction.transactionId,
    ]);
  });

  it("refuses, whole: an unknown account, a currency without a wallet, too little money, a bad body", async () => {
    const a = await sandboxAccount(sb, { NGN: 100 });
    const unknown = await externalDebit("acct_nobody", { amount: 1, currency: "NGN" });
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toBe("account acct_nobody not found");
    const noWallet = await externalDebit(a.accountId, { amount: 1, currency: "GBP" });
    expect(noWallet.body.message).toBe(`currency: account ${a.accountId} has no GBP wallet`);
    const tooMuch = await externalDebit(a.accountId, { amount: 100.01, currency: "NGN" });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body).toMatchObject({ code: "insufficient_funds" });
    const cases: [unknown, string][] = [
      [{ currency: "NGN" }, "amount: required"],
      [
        { amount: 1, currency: "NGN", channel: "card" },
        'channel: must be one of "bank", "mobile_money"',
      ],
      [{ amount: 1, currency: "NGN", status: "DONE" }, "status: must be one of"],
      [{ amount: 1, currency: "NGN", createdAt: "2025-03-01" }, "createdAt: must be an ISO 8601"],
      [{ amount: 1, currency: "NGN", reference: "x" }, "reference: unknown field"],
    ];
    for (const [body, message] of cases) {
      const res = await externalDebit(a.accountId, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toContain(message);
    }
    expect(await a.list()).toEqual([]);
    expect(await editsOf(a.accountId)).toEqual([]);
  });
});

describe("the other side's books, seeded with three of each drift kind among 1,000 payouts", () => {
  it("lists and lookups show exactly what was seeded; the edit log holds each change once", async () => {
    const a = await sandboxAccount(sb, { NGN: 10_000_000, USD: 10_000 });
    const since = (await sb.control("GET", "/health")).body.data.now as string;
    const ordinary: string[] = [];
    for (let i = 0; i < 1_000; i += 1)
      ordinary.push((await a.pay(100 + i)).transactionId as string);
    const failed: string[] = [];
    for (let i = 0; i < 3; i += 1)
      failed.push((await a.pay(50, "0000000001")).transactionId as string);
    await sb.advance(SETTLE);
    const [reversedTx, returned, failedLater, amended, currencyChanged, gone] = [
      ordinary.slice(0, 1),
      ordinary.slice(1, 2),
      ordinary.slice(2, 3),
      ordinary.slice(3, 5),
      ordinary.slice(5, 6),
      ordinary.slice(6, 9),
    ];
    // (a) moneyq saw FAILED; the provider in fact paid.
    for (const id of failed) await edit(id, { status: "SUCCESSFUL" });
    // (b) moneyq saw success; the provider reversed (two ways) or failed it.
    await sb.control("POST", `/transactions/${reversedTx[0]}/reverse`, {});
    await sb.control("POST", `/transactions/${returned[0]}/reverse`, { body: { as: "status" } });
    await edit(failedLater[0], { status: "FAILED" });
    // (c) debits moneyq never sent.
    const external: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const res = await externalDebit(a.accountId, { amount: 70 + i, currency: "NGN" });
      external.push(res.body.data.transaction.transactionId);
    }
    // (d) amounts or currency that differ.
    for (const id of amended) await edit(id, { amount: 1 });
    await edit(currencyChanged[0], { currency: "USD", amount: 5 });
    // (e) successes the provider has no record of.
    for (const id of gone) await edit(id, { hidden: true });

    const listed = await a.list({ since });
    const byId = new Map(listed.map((t) => [t.transactionId as string, t]));
    // 1,003 payouts, 3 external debits, 1 reversing transaction; 3 hidden.
    expect(listed).toHaveLength(1_003 + 3 + 1 - 3);
    for (const id of failed) expect(byId.get(id)?.status).toBe("SUCCESSFUL");
    expect(byId.get(reversedTx[0] as string)?.reversedBy).toEqual(expect.any(String));
    expect(byId.get(returned[0] as string)?.status).toBe("REVERSED");
    expect(byId.get(failedLater[0] as string)?.status).toBe("FAILED");
    for (const id of external)
      expect(byId.get(id)).toMatchObject({ type: "DEBIT", status: "SUCCESSFUL" });
    for (const id of amended) expect(byId.get(id)?.amount).toBe(1);
    expect(byId.get(currencyChanged[0] as string)).toMatchObject({ currency: "USD", amount: 5 });
    for (const id of gone) expect(byId.has(id)).toBe(false);
    const untouched = ordinary.slice(9);
    expect(
      untouched.every(
        (id, i) => byId.get(id)?.status === "SUCCESSFUL" && byId.get(id)?.amount === 109 + i,
      ),
    ).toBe(true);
    const actions = (await editsOf(a.accountId)).map((e: { action: string }) => e.action);
    expect(actions.filter((x: string) => x === "edit")).toHaveLength(3 + 1 + 2 + 1 + 3);
    expect(actions.filter((x: string) => x === "reversed")).toHaveLength(2);
    expect(actions.filter((x: string) => x === "external_debit")).toHaveLength(3);
  });
});
