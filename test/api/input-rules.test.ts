import { describe, expect, it } from "vitest";
import { PaymentsClient } from "../../src/client/index.js";
import { EnqueueValidationError } from "../../src/queues/enqueue-error.js";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { bankJob, useLoggedService } from "../helpers/logged-service.js";

const h = useLoggedService();

/** A body nested `depth` levels below its top: {"a":{"a":...}}. */
const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

const order = (params: Record<string, unknown>, body: Record<string, unknown> = {}) => ({
  kind: "exchange.order",
  idempotencyKey: `order-${Math.random().toString(36).slice(2)}`,
  request: {
    params: { offerId: "offer_usd_ngn", ...params },
    body: {
      amount: 100,
      buyerDebitPaymentMethod: "WALLET",
      buyerCreditPaymentMethod: "BANK_TRANSFER",
      ...body,
    },
  },
});

/** Every field issue of an answer, as "field: rule". */
const issues = (answer: { body: { error: { details?: { field: string; rule: string }[] } } }) =>
  (answer.body.error.details ?? []).map((d) => `${d.field}: ${d.rule}`);

async function refused(body: unknown, field: string, rule: string | RegExp) {
  const answer = await h.api("POST", "/v1/jobs", { body });
  expect(answer.status, answer.text).toBe(400);
  const found = issues(answer).filter((i) => i.startsWith(field));
  expect(found, answer.text).not.toHaveLength(0);
  expect(found.join("\n")).toMatch(rule);
  return answer;
}

const sandboxSends = async () =>
  (await h.sb.control("GET", "/requests")).body.data.requests.filter(
    (r: { method: string }) => r.method === "POST",
  ).length;

describe("idempotency keys and path ids can always be sent", () => {
  it("refuses keys that are not 1 to 255 visible ASCII characters, from the body, the header and the query", async () => {
    for (const key of ["ключ-1", "a b", "x\u0000y", "line\r\nbreak", "😀", "k".repeat(256), ""])
      await refused(
        bankJob({ idempotencyKey: key }),
        "body.idempotencyKey",
        /visible ASCII|at most 255|at least 1/,
      );
    const header = await h.api("POST", "/v1/jobs", {
      body: bankJob(),
      headers: { "idempotency-key": "a b" },
    });
    expect(header.status).toBe(400);
    expect(issues(header)[0]).toMatch(/^headers\.idempotency-key: must be visible ASCII/);
    const query = await h.api("GET", `/v1/jobs?idempotencyKey=${encodeURIComponent("ключ")}`);
    expect(query.status).toBe(400);
    expect(issues(query)[0]).toMatch(/^query\.idempotencyKey: must be visible ASCII/);
  });

  it("refuses them in the producer and the client too, before anything is sent", async () => {
    const producer = h.service().producer;
    await expect(
      producer.enqueue({
        ...(bankJob() as unknown as JobInput),
        account: "alpha",
        idempotencyKey: "ключ-1",
      }),
    ).rejects.toSatisfy(
      (e) => e instanceof EnqueueValidationError && e.issues[0]?.field === "idempotencyKey",
    );
    const before = await sandboxSends();
    const client = new PaymentsClient({
      baseUrl: h.sb.sandbox.baseUrl,
      apiKey: "sk_sandbox_alpha_key_000001",
    });
    try {
      await expect(
        client.withdrawToBank({
          idempotencyKey: "ключ\r\n1",
          body: bankJob().request.body as never,
        }),
      ).rejects.toThrow(/idempotencyKey: must be 1 to 255 visible ASCII/);
      await expect(client.getOrder({ params: { orderId: ".." } })).rejects.toThrow(
        /must not be '\.' or '\.\.'/,
      );
    } finally {
      await client.close();
    }
    expect(await sandboxSends()).toBe(before);
  });

  it("refuses path ids '.', '..' and any with '/', in jobs and batch rows", async () => {
    for (const offerId of ["..", ".", "a/b", "x y"])
      await refused(order({ offerId }), "body.request.params.offerId", /must/);
    const batch = await h.api("POST", "/v1/batches", {
      body: {
        kind: "exchange.order",
        rows: [
          {
            reference: "dots",
            offerId: "..",
            amount: "10",
            buyerDebitPaymentMethod: "WALLET",
            buyerCreditPaymentMethod: "BANK_TRANSFER",
          },
        ],
      },
    });
    expect(batch.status).toBe(422);
    expect(batch.body.error.rows[0]).toMatchObject({
      column: "offerId",
      rule: "must not be '.' or '..'",
    });
  });
});

describe("free-form objects are bounded", () => {
  it("answers 400 naming the field to nesting bombs, never 500", async () => {
    const bomb = `{"kind":"payout.bank","idempotencyKey":"bomb-1","metadata":${nested(5000)},"request":${JSON.stringify(bankJob().request)}}`;
    const answer = await refused(bomb, "body.metadata", /nested deeper than 64 levels/);
    expect(answer.body.error.code).toBe("invalid_body");
    const details = order({}, { buyerCreditPaymentDetails: "BOMB" });
    await refused(
      JSON.stringify(details).replace('"BOMB"', nested(5000)),
      "body.request.body.buyerCreditPaymentDetails",
      /nested deeper than/,
    );
    const rows = `{"kind":"payout.bank","rows":[{"reference":"r1","amount":${nested(10_000)}}]}`;
    const batch = await h.api("POST", "/v1/batches", { body: rows });
    expect(batch.status).toBe(400);
    expect(issues(batch)[0]).toMatch(/^body\.rows\[0\]\.amount\S*: nested deeper than 64 levels/);
    // Within what any body may hold, beyond what a free-form object may.
    await refused(
      JSON.stringify(bankJob({ idempotencyKey: "deep-20", metadata: JSON.parse(nested(20)) })),
      "body.metadata",
      /nested deeper than 16 levels/,
    );
    await refused(
      bankJob({ idempotencyKey: "wide", metadata: { note: "x".repeat(5000) } }),
      "body.metadata",
      /at most 4096 bytes as JSON/,
    );
  });

  it("names __proto__ and constructor keys", async () => {
    await refused(
      `{"kind":"payout.bank","idempotencyKey":"proto","metadata":{"__proto__":{"admin":true}},"request":${JSON.stringify(bankJob().request)}}`,
      "body.metadata.__proto__",
      /the key "__proto__" is not allowed/,
    );
    await refused(
      order({}, { buyerDebitPaymentDetails: { constructor: { prototype: 1 } } }),
      "body.request.body.buyerDebitPaymentDetails.constructor",
      /the key "constructor" is not allowed/,
    );
    // The library entry checks the object as given, before any copy could drop the key.
    await expect(
      h.service().producer.enqueue({
        ...(bankJob() as unknown as JobInput),
        account: "alpha",
        idempotencyKey: "proto-lib",
        metadata: JSON.parse('{"__proto__":{"x":1}}'),
      }),
    ).rejects.toSatisfy(
      (e) => e instanceof EnqueueValidationError && e.issues[0]?.field === "metadata.__proto__",
    );
  });

  it("refuses numbers that are not finite with a rule that says so", async () => {
    const text = JSON.stringify(bankJob({ idempotencyKey: "inf" })).replace(
      '"amount":150',
      '"amount":1e400',
    );
    await refused(text, "body.request.body.amount", /must be a finite number/);
    await expect(
      h.service().producer.enqueue({
        ...(bankJob({}, { amount: Number.POSITIVE_INFINITY }) as unknown as JobInput),
        account: "alpha",
        idempotencyKey: "inf-lib",
      }),
    ).rejects.toSatisfy(
      (e) => e instanceof EnqueueValidationError && e.issues[0]?.rule === "must be a finite number",
    );
  });
});

describe("exact money", () => {
  const amountText = (text: string, key: string) =>
    JSON.stringify(bankJob({ idempotencyKey: key }, { amount: 777 })).replace("777", text);

  it("refuses amounts below 0.01, with more than 2 decimals or more than 15 digits, on their decimal form", async () => {
    await refused(amountText("1e-9", "m1"), "body.request.body.amount", /at least 0\.01/);
    await refused(amountText("0.001", "m2"), "body.request.body.amount", /at least 0\.01/);
    await refused(
      amountText("1.005", "m3"),
      "body.request.body.amount",
      /at most 2 decimal places/,
    );
    await refused(
      amountText("0.30000000000000004", "m4"),
      "body.request.body.amount",
      /at most 15 significant digits/,
    );
    await refused(
      JSON.stringify(order({})).replace('"amount":100', '"amount":12345678901234567.89'),
      "body.request.body.amount",
      /at most 15 significant digits/,
    );
    const csv = await h.api("POST", "/v1/batches?kind=payout.bank", {
      type: "text/csv",
      body: "reference,amount,currency,bankCode,accountNumber,accountName,bankName\nc1,0.300000000000000004,NGN,044,0123456789,Ada,Access\nc2,0.001,NGN,044,0123456789,Ada,Access\n",
    });
    expect(csv.status).toBe(422);
    expect(csv.body.error.rows.map((r: { rule: string }) => r.rule)).toEqual([
      expect.stringMatching(/at most 15 significant digits/),
      expect.stringMatching(/at least 0\.01/),
    ]);
    await expect(
      h.service().producer.enqueue({
        ...(bankJob({}, { amount: 1e-9 }) as unknown as JobInput),
        account: "alpha",
        idempotencyKey: "tiny-lib",
      }),
    ).rejects.toThrow(/at least 0\.01/);
  });

  it("accepts the edges: 0.01, 999999999.99 and 1000000000", async () => {
    for (const [amount, key] of [
      [0.01, "edge-1"],
      [999_999_999.99, "edge-2"],
      [1_000_000_000, "edge-3"],
    ] as const) {
      const answer = await h.api("POST", "/v1/jobs", {
        body: bankJob({ idempotencyKey: key }, { amount }),
      });
      expect(answer.status, answer.text).toBe(202);
    }
  });

  it("the sandbox applies the same rules", async () => {
    const send = (text: string, key: string) =>
      h.sb.api("POST", "/transaction/fund-wallet", {
        idem: key,
        rawBody: `{"amount":${text},"currency":"NGN","paymentMethod":"CARD"}`,
      });
    for (const [text, rule] of [
      ["1e-9", /at least 0\.01/],
      ["0.30000000000000004", /at most 15 significant digits/],
      ["1.005", /at most 2 decimal places/],
      ["1e400", /must be a finite number/],
    ] as const) {
      const answer = await send(text, `sb-${text}`);
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(answer.body.code).toBe("validation_error");
      expect(JSON.stringify(answer.body.errors)).toMatch(rule);
    }
    const plain = await h.sb.api("POST", "/transaction/fund-wallet", {
      idem: "sb-plain",
      rawBody: '{"amount":10,"currency":"NGN","paymentMethod":"CARD"}',
      contentType: "text/plain",
    });
    expect(plain.status).toBe(415);
    const longId = await h.sb.api("GET", `/transactions/${"x".repeat(3000)}`);
    expect(longId.status).toBe(400);
    const badEncoding = await h.sb.api("GET", "/transactions/%ZZ");
    expect(badEncoding.status).toBe(400);
    expect(badEncoding.body.message).not.toMatch(/JSON/);
    const proto = await h.sb.api("POST", "/transaction/fund-wallet", {
      idem: "sb-proto",
      rawBody: '{"amount":10,"currency":"NGN","paymentMethod":"CARD","__proto__":{}}',
    });
    expect(proto.status).toBe(400);
    expect(proto.body.message).toMatch(/__proto__/);
  });
});
