import { describe, expect, it } from "vitest";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { TRON_ADDRESS } from "../fixtures/operation-examples.js";
import { usePipeline } from "../helpers/pipeline.js";
import { waitFor } from "../helpers/wait-until.js";

const p = usePipeline();

const bank = (amount: number, accountNumber = "0123456789") => ({
  amount,
  currency: "NGN" as const,
  bankCode: "044",
  accountNumber,
  accountName: "Ada Obi",
  bankName: "Access Bank",
});

describe("every job kind end to end", () => {
  it("runs each kind to one terminal result whose effect is in the sandbox ledger", async () => {
    const accounts = (await p.sb.control("GET", "/accounts")).body.data.accounts;
    const demo = accounts[0];
    const jobs: JobInput[] = [
      {
        kind: "payout.bank",
        account: "default",
        batchId: "e2e",
        reference: "bank-1",
        request: { body: bank(100) },
      },
      {
        kind: "payout.momo",
        account: "default",
        batchId: "e2e",
        reference: "momo-1",
        request: {
          body: {
            amount: 50,
            currency: "KES",
            phoneNumber: "254712345678",
            network: "MPESA",
            iso2: "KE",
          },
        },
      },
      {
        kind: "payout.stable",
        account: "default",
        batchId: "e2e",
        reference: "stable-1",
        request: {
          params: { subAccountId: demo.subAccountIds[0] },
          body: { amount: "5", toAddress: TRON_ADDRESS, currency: "USDC", network: "base" },
        },
      },
      {
        kind: "funding.wallet",
        account: "default",
        batchId: "e2e",
        reference: "fund-1",
        request: { body: { amount: 75, currency: "USD", paymentMethod: "CARD" } },
      },
      {
        kind: "exchange.order",
        account: "default",
        batchId: "e2e",
        reference: "order-1",
        request: {
          params: { offerId: "offer_usd_ngn" },
          body: {
            amount: 20,
            buyerDebitPaymentMethod: "WALLET",
            buyerCreditPaymentMethod: "WALLET",
          },
        },
      },
      {
        kind: "exchange.payment-link-order",
        account: "default",
        batchId: "e2e",
        reference: "plink-1",
        request: {
          params: { offerId: "offer_usd_ngn" },
          query: { token: demo.paymentLinks[0].token },
          body: { amount: 15, buyerDebitPaymentMethod: "CARD", buyerCreditPaymentMethod: "WALLET" },
        },
      },
      {
        kind: "wallet.create",
        account: "default",
        idempotencyKey: "wallet-zar",
        request: { body: { currency: "ZAR" } },
      },
      {
        kind: "collection.virtual-account",
        account: "default",
        idempotencyKey: "va-1",
        request: { body: { amount: 1000, validFor: 30 } },
      },
    ];
    const enqueued = await p.producer().enqueueMany(jobs);
    const results = await p.waitForResults(jobs.length);
    expect(results).toHaveLength(jobs.length);
    const byJob = new Map(results.map((r) => [r.jobId, r]));
    const ledger = (await p.sb.control("GET", "/ledger")).body.data.entries as {
      idempotencyKey: string;
      effectId: string;
    }[];
    for (const [i, e] of enqueued.entries()) {
      const r = byJob.get(e.jobId);
      expect(r, jobs[i]?.kind).toMatchObject({
        result: "succeeded",
        kind: jobs[i]?.kind,
        idempotencyKey: e.idempotencyKey,
        account: "default",
      });
      expect(r?.upstreamId).toBeTruthy();
      if (jobs[i]?.kind === "wallet.create" || jobs[i]?.kind === "collection.virtual-account")
        continue;
      const effects = new Set(
        ledger.filter((x) => x.idempotencyKey === e.idempotencyKey).map((x) => x.effectId),
      );
      expect([...effects], jobs[i]?.kind).toEqual([r?.upstreamId]);
    }
    expect(byJob.get(enqueued[0]?.jobId as string)).toMatchObject({
      batchId: "e2e",
      reference: "bank-1",
      upstreamStatus: "SUCCESSFUL",
    });
    expect((await p.sb.invariants()).ok).toBe(true);
  });

  it("keeps a finished job's result in its marker and on the stream, not again in the job", async () => {
    const [enqueued] = await p.producer().enqueueMany([
      {
        kind: "payout.bank",
        account: "default",
        batchId: "e2e-copy",
        reference: "bank-2",
        request: { body: bank(120) },
      },
    ]);
    const jobId = enqueued?.jobId as string;
    const streamed = await p.resultOf(jobId);
    const queue = p.workers().queues.get("default");
    const job = await waitFor(
      async () => queue?.getJob(jobId),
      (found) => found === undefined || Boolean(found.finishedOn),
      5_000,
      "the job to be marked finished",
    );
    expect(await job?.getState()).toBe("completed");
    expect(job?.returnvalue ?? null).toBeNull();
    expect(await p.workers().results.get("default", jobId)).toEqual(streamed);
  });
});
