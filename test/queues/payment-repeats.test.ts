import { afterAll, describe, expect, it } from "vitest";
import { PaymentRepeatedError } from "../../src/queues/enqueue-error.js";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { paymentFingerprint } from "../../src/queues/payment-fingerprint.js";
import { Producer } from "../../src/queues/producer.js";
import { jobHoldKey, paymentRepeatKeys } from "../../src/redis/keys.js";
import { ResultsStore } from "../../src/results/results-store.js";
import { useTestRedis } from "../helpers/redis.js";

const bank = (body: Record<string, unknown>) => ({
  body: {
    amount: 1500,
    currency: "NGN",
    bankCode: "044",
    accountNumber: "0123456789",
    accountName: "Ada Obi",
    bankName: "Access Bank",
    ...body,
  },
});

describe("a payment's fingerprint", () => {
  it("is the same payment whatever the amount's spelling, the spaces around, or a number's separators", () => {
    const base = paymentFingerprint("payout.bank", bank({}));
    expect(base).toMatch(/^[0-9a-f]{32}$/);
    for (const same of [
      { amount: "1500.00" },
      { amount: "1500" },
      { amount: 1.5e3 },
      { currency: " ngn " },
      { bankCode: " 044 " },
      { accountNumber: "0123 456-789" },
      { accountName: "Someone Else", bankName: "Another Name" },
    ])
      expect(paymentFingerprint("payout.bank", bank(same)), JSON.stringify(same)).toBe(base);
  });

  it("differs with the kind, the beneficiary, the amount or the currency", () => {
    const base = paymentFingerprint("payout.bank", bank({}));
    for (const other of [
      { amount: "1500.01" },
      { currency: "KES" },
      { bankCode: "058" },
      { accountNumber: "0123456780" },
    ])
      expect(paymentFingerprint("payout.bank", bank(other)), JSON.stringify(other)).not.toBe(base);
  });

  it("folds the case of a network but keeps an address's; a phone's + and spaces go", () => {
    const momo = (phoneNumber: string, network: string) => ({
      body: { amount: 10, currency: "KES", phoneNumber, network, iso2: "KE" },
    });
    expect(paymentFingerprint("payout.momo", momo("+254 700 000001", " Safaricom"))).toBe(
      paymentFingerprint("payout.momo", momo("254700000001", "SAFARICOM")),
    );
    const stable = (toAddress: string, network: string) => ({
      params: { subAccountId: "sub_1" },
      body: { amount: "25", currency: "USDT", toAddress, network },
    });
    expect(paymentFingerprint("payout.stable", stable(" TXyzAbc ", "tron"))).toBe(
      paymentFingerprint("payout.stable", stable("TXyzAbc", "TRON")),
    );
    expect(paymentFingerprint("payout.stable", stable("TXyzAbc", "tron"))).not.toBe(
      paymentFingerprint("payout.stable", stable("txyzabc", "tron")),
    );
  });

  it("is none for work that pays no beneficiary, or a payment missing a part", () => {
    expect(
      paymentFingerprint("funding.wallet", {
        body: { amount: 5, currency: "NGN", paymentMethod: "bank" },
      }),
    ).toBeUndefined();
    expect(paymentFingerprint("payout.bank", bank({ accountNumber: " " }))).toBeUndefined();
    expect(paymentFingerprint("payout.bank", bank({ amount: "-1" }))).toBeUndefined();
  });
});

const redis = useTestRedis("repeats-store");
const connection = redis.connect();
const opened: Producer[] = [];
afterAll(async () => {
  for (const p of opened) await p.close();
});

function producerWith(policy: "warn" | "hold" | "refuse", windowMs: number): Producer {
  const producer = new Producer({
    connection,
    prefix: redis.prefix,
    accounts: ["acme"],
    maxAttempts: 3,
    retentionMs: 3_600_000,
    paymentRepeats: new Map([["acme", { policy, windowMs }]]),
  });
  opened.push(producer);
  return producer;
}

const payout = (idempotencyKey: string, accountNumber = "0123456789"): JobInput =>
  ({
    kind: "payout.bank",
    account: "acme",
    idempotencyKey,
    request: bank({ accountNumber }),
  }) as JobInput;

describe("the payment repeats store", () => {
  it("finds a queued payment under another key until the window has passed, then holds nothing of it", async () => {
    const producer = producerWith("warn", 1_000);
    const first = await producer.enqueue(payout("window-1", "1111111111"));
    expect(first.repeats).toBeUndefined();
    const again = await producer.enqueue(payout("window-1", "1111111111"));
    expect(again.repeats, "the same key is the same job, not a repeat").toBeUndefined();
    const second = await producer.enqueue(payout("window-2", "1111111111"));
    expect(second.repeats).toEqual([
      expect.objectContaining({ jobId: first.jobId, idempotencyKey: "window-1", state: "queued" }),
    ]);
    const digest = paymentFingerprint("payout.bank", bank({ accountNumber: "1111111111" }));
    const keys = paymentRepeatKeys(redis.space(), "acme", digest as string);
    expect(keys.records).not.toContain("1111111111");
    expect(await connection.hlen(keys.records)).toBe(2);

    await new Promise((r) => setTimeout(r, 1_300));
    expect(await connection.exists(keys.records, keys.times)).toBe(0);
    const third = await producer.enqueue(payout("window-3", "1111111111"));
    expect(third.repeats).toBeUndefined();
  });

  it("says paid once the result is recorded, and forgets a payment whose result paid nothing", async () => {
    const producer = producerWith("warn", 60_000);
    const results = new ResultsStore(connection, {
      prefix: redis.prefix,
      retentionMs: 3_600_000,
      maxLen: 1_000,
    });
    const paid = await producer.enqueue(payout("paid-1", "2222222222"));
    const failed = await producer.enqueue(payout("failed-1", "2222222222"));
    const digest = paymentFingerprint("payout.bank", bank({ accountNumber: "2222222222" }));
    const now = new Date().toISOString();
    const ending = { kind: "payout.bank", account: "acme", attempts: 1, durationMs: 1 };
    await results.emit(
      {
        ...ending,
        jobId: paid.jobId,
        idempotencyKey: "paid-1",
        result: "succeeded",
        enqueuedAt: now,
        finishedAt: now,
      },
      { payment: digest },
    );
    await results.emit(
      {
        ...ending,
        jobId: failed.jobId,
        idempotencyKey: "failed-1",
        result: "failed",
        enqueuedAt: now,
        finishedAt: now,
      },
      { payment: digest },
    );
    // Its job removed, a paid payment is still paid: its record says so.
    await producer.remove("acme", paid.jobId);
    const third = await producer.enqueue(payout("paid-2", "2222222222"));
    expect(third.repeats).toEqual([expect.objectContaining({ jobId: paid.jobId, state: "paid" })]);
  });

  it("refuse: a repeat is refused naming the rule and nothing is enqueued; hold: it waits for approval", async () => {
    const refusing = producerWith("refuse", 60_000);
    const first = await refusing.enqueue(payout("refuse-1", "3333333333"));
    const refused = await refusing.enqueue(payout("refuse-2", "3333333333")).catch((e) => e);
    expect(refused).toBeInstanceOf(PaymentRepeatedError);
    expect(refused.matches).toEqual([expect.objectContaining({ jobId: first.jobId })]);
    expect(refused.rule).toMatch(
      new RegExp(
        `^repeats a payment queued \\d{4}-\\d\\d-\\d\\d by job ${first.jobId} \\(payment repeats: refuse, window 1 minute\\)$`,
      ),
    );
    expect(await refusing.fingerprinted("acme", [refusing.jobIdOf(payout("refuse-2"))])).toEqual([
      false,
    ]);

    // Work enqueued together is recorded, not checked; a replay of a job's own key is answered
    // as it was first judged, not refused for a payment recorded since.
    await refusing.enqueueMany([payout("refuse-many", "3333333333")]);
    const replay = await refusing.enqueue(payout("refuse-1", "3333333333"));
    expect(replay).toEqual(first);
    const later = await refusing.enqueue(payout("refuse-3", "3333333333")).catch((e) => e);
    expect(later).toBeInstanceOf(PaymentRepeatedError);
    expect(later.matches).toHaveLength(2);

    const holding = producerWith("hold", 60_000);
    await holding.enqueue(payout("hold-1", "4444444444"));
    const held = await holding.enqueue(payout("hold-2", "4444444444"));
    const hold = await connection.hgetall(jobHoldKey(redis.space(), "acme", held.jobId));
    expect(hold).toMatchObject({ state: "awaiting_approval", approval: "pending" });
    expect(JSON.parse(hold.repeats as string)).toHaveLength(1);
  });
});
