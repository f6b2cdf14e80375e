import { describe, expect, it } from "vitest";
import { PaymentsClient } from "../../src/client/payments-client.js";
import { OPERATION_IDS, operations } from "../../src/contract/operations.js";
import { JOB_KINDS } from "../../src/queues/job-kinds.js";
import { operationExamples } from "../fixtures/operation-examples.js";
import { everyKind } from "../fixtures/provider-profiles.js";
import { usePipeline } from "../helpers/pipeline.js";
import { useSandbox } from "../helpers/sandbox.js";

const p = usePipeline({}, { sandbox: { specMinimal: true } });
const CREATIONS = new Set(["wallet.create", "collection.virtual-account"]);

describe("a provider that answers only what the spec promises (an empty data)", () => {
  it("sends each job once, fails none, and keeps what it could not read for an operator", async () => {
    const demo = (await p.sb.control("GET", "/accounts")).body.data.accounts[0];
    const before = (await p.sb.control("GET", "/requests")).body.data.requests.length;
    const jobs = everyKind(demo);
    const enqueued = await p.producer().enqueueMany(jobs);
    const results = await p.waitForResults(jobs.length);
    expect(results).toHaveLength(jobs.length);
    // Settle anything in flight, then count: nothing was sent twice, nothing was looked up.
    await new Promise((r) => setTimeout(r, 300));
    const requests = (await p.sb.control("GET", "/requests")).body.data.requests.slice(before);
    expect(requests).toHaveLength(jobs.length);
    // Exactly one request per job, each to its own operation.
    const sent = requests.map((r: { method: string; path: string }) => `${r.method} ${r.path}`);
    const expected = jobs.map((job) => {
      const op = operations[JOB_KINDS[job.kind].operation];
      return `${op.method} /v1${op.path.split("{")[0]}`;
    });
    expect(
      expected.map((prefix) => sent.filter((x: string) => x.startsWith(prefix)).length),
    ).toEqual(expected.map((prefix) => expected.filter((x) => x === prefix).length));
    const byJob = new Map(results.map((r) => [r.jobId, r]));
    for (const [i, e] of enqueued.entries()) {
      const kind = jobs[i]?.kind as string;
      const r = byJob.get(e.jobId);
      expect(r?.result, kind).not.toBe("failed");
      if (CREATIONS.has(kind)) {
        expect(r, kind).toMatchObject({ result: "succeeded" });
        continue;
      }
      expect(r, kind).toMatchObject({
        result: "needs_reconciliation",
        code: "unrecognised_answer",
        upstreamData: {},
      });
      expect(r?.attempts, kind).toBe(1);
      expect(r?.message, kind).toContain('the provider answered "');
      expect(r?.message, kind).toMatch(/answers\.\w+\.id \(\w+\)/);
    }
  });
});

describe("the client against the spec's minimum", () => {
  const sb = useSandbox({ specMinimal: true });

  it("returns the envelope's data from all 19 operations", async () => {
    const client = new PaymentsClient({ baseUrl: sb.sandbox.baseUrl, apiKey: sb.sandbox.apiKey });
    const demo = (await sb.control("GET", "/accounts")).body.data.accounts[0];
    const sub = demo.subAccountIds[0] as string;
    const token = demo.paymentLinks[0].token as string;
    const effectOf = async (key: string) =>
      (await sb.control("GET", "/ledger")).body.data.entries.find(
        (e: { idempotencyKey: string | null }) => e.idempotencyKey === key,
      )?.effectId as string;
    const answers: Record<string, unknown> = {};
    const ex = operationExamples;
    answers.withdrawToBank = await client.withdrawToBank(ex.withdrawToBank);
    answers.withdrawToMobileMoney = await client.withdrawToMobileMoney(ex.withdrawToMobileMoney);
    answers.fundWallet = await client.fundWallet(ex.fundWallet);
    answers.withdrawStable = await client.withdrawStable({
      ...ex.withdrawStable,
      params: { subAccountId: sub },
    });
    answers.createWallet = await client.createWallet(ex.createWallet);
    answers.createVirtualAccount = await client.createVirtualAccount(ex.createVirtualAccount);
    answers.initiateIdentityVerification = await client.initiateIdentityVerification(
      ex.initiateIdentityVerification,
    );
    answers.getPaymentLinkRate = await client.getPaymentLinkRate(ex.getPaymentLinkRate);
    answers.getExchangeRate = await client.getExchangeRate(ex.getExchangeRate);
    answers.listTransactions = await client.listTransactions(ex.listTransactions);
    answers.getTransaction = await client.getTransaction({
      params: { transactionId: await effectOf("key-bank-1") },
    });
    answers.listStableTransactions = await client.listStableTransactions(ex.listStableTransactions);
    answers.getStableTransaction = await client.getStableTransaction({
      params: { subAccountId: sub, transactionId: await effectOf("key-stable-1") },
    });
    answers.getStableBalance = await client.getStableBalance({ params: { subAccountId: sub } });
    answers.listOrders = await client.listOrders();
    answers.createOrder = await client.createOrder(ex.createOrder);
    answers.getOrder = await client.getOrder({
      params: { orderId: await effectOf("key-order-1") },
    });
    answers.createPaymentLinkOrder = await client.createPaymentLinkOrder({
      ...ex.createPaymentLinkOrder,
      query: { token },
    });
    const fresh = await sb.control("POST", "/payment-links", {
      body: { accountId: demo.accountId, offerId: "offer_usd_ngn" },
    });
    answers.declinePaymentLink = await client.declinePaymentLink({
      ...ex.declinePaymentLink,
      query: { token: fresh.body.data.token },
    });
    await client.close();
    expect(Object.keys(answers).sort()).toEqual([...OPERATION_IDS].sort());
    for (const id of OPERATION_IDS) expect(answers[id], id).toEqual({});
  });
});
