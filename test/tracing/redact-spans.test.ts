import { describe, expect, it } from "vitest";
import { jobAttributes } from "../../src/tracing/job-spans.js";
import { PathTemplates, REDACTED_PATH, redactAttributes } from "../../src/tracing/redact-spans.js";

const paths = new PathTemplates("/payments/v1");

describe("PathTemplates", () => {
  it("turns an upstream path into its operation's template, its query cut off", () => {
    expect(paths.of("/payments/v1/transactions/txn_123")).toBe(
      "/payments/v1/transactions/{transactionId}",
    );
    expect(paths.of("/payments/v1/stable-currency/sub-accounts/sub_9/transaction/t_1")).toBe(
      "/payments/v1/stable-currency/sub-accounts/{subAccountId}/transaction/{transactionId}",
    );
    expect(paths.of("/payments/v1/offer/off_1/payment-request/order?token=plink_secret")).toBe(
      "/payments/v1/offer/{offerId}/payment-request/order",
    );
    expect(paths.of("/payments/v1/transaction/transfer/bank")).toBe(
      "/payments/v1/transaction/transfer/bank",
    );
  });

  it("redacts any other path whole: under another base, or not the Payments API's", () => {
    expect(paths.of("/v1/transactions/txn_123")).toBe(REDACTED_PATH);
    expect(paths.of("/services/T000/B000/XXXXSECRET")).toBe(REDACTED_PATH);
    expect(paths.of("/payments/v1/transactions/a/b")).toBe(REDACTED_PATH);
  });
});

describe("redactAttributes", () => {
  it("keeps only templates of URLs, and no query, header, error or result text", () => {
    const out = redactAttributes(
      {
        "url.full": "https://api.test/payments/v1/order/ord_42?token=t0k3n",
        "url.path": "/payments/v1/order/ord_42",
        "url.query": "?token=t0k3n",
        "http.request.header.x-api-key": ["sk_live_x"],
        "http.response.header.set-cookie": ["a=b"],
        "bullmq.job.failed.reason": "failed: Account 0123456789 of Ada Obi is closed",
        "exception.message": "the provider answered with Ada Obi",
        "exception.stacktrace": "Error: Ada Obi",
        "exception.type": "PaymentsResponseError",
        "server.port": 443,
        "moneyq.job.id": "j_1",
      },
      paths,
    );
    expect(out).toEqual({
      "url.full": "https://api.test/payments/v1/order/{orderId}",
      "url.path": "/payments/v1/order/{orderId}",
      "exception.type": "PaymentsResponseError",
      "server.port": 443,
      "moneyq.job.id": "j_1",
    });
  });

  it("gives a server span's path its route, and a webhook URL its origin alone", () => {
    expect(
      redactAttributes(
        { "url.path": "/v1/jobs/j_1?account=default", "http.route": "/v1/jobs/:jobId" },
        paths,
      ),
    ).toEqual({ "url.path": "/v1/jobs/:jobId", "http.route": "/v1/jobs/:jobId" });
    expect(
      redactAttributes({ "url.full": "https://hooks.test/services/T0/B0/SECRET?x=1" }, paths),
    ).toEqual({ "url.full": `https://hooks.test${REDACTED_PATH}` });
  });
});

describe("jobAttributes", () => {
  it("says a job's id, kind, account and attempt, never anything else given with them", () => {
    const runLog = {
      jobId: "j_1",
      key: "idem-CANARY",
      kind: "payout.bank",
      account: "default",
      attempt: 2,
    };
    const attributes = jobAttributes(runLog);
    expect(attributes).toEqual({
      "moneyq.job.id": "j_1",
      "moneyq.job.kind": "payout.bank",
      "moneyq.account": "default",
      "moneyq.job.attempt": 2,
    });
    expect(JSON.stringify(attributes)).not.toContain("idem-CANARY");
  });
});
