import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  OPERATION_IDS,
  type OperationId,
  type OperationSpec,
  operations,
} from "../../src/contract/index.js";
import { limitCases, MISSING } from "../fixtures/limit-cases.js";
import { operationExamples } from "../fixtures/operation-examples.js";
import { type CallOptions, useSandbox } from "../helpers/sandbox.js";

const sb = useSandbox({ settleDelayMs: 50 });

interface Example {
  params?: Record<string, string>;
  query?: Record<string, string | number>;
  body?: unknown;
  idempotencyKey?: string;
}

let ids: {
  subAccountId: string;
  transactionId: string;
  stableTransactionId: string;
  orderId: string;
};
let keyCounter = 0;

async function freshToken(): Promise<string> {
  const res = await sb.control("POST", "/payment-links", {
    body: { accountId: sb.sandbox.accounts[0]?.accountId, offerId: "offer_usd_ngn" },
  });
  return res.body.data.token;
}

function pathOf(op: OperationSpec, params: Record<string, string> = {}): string {
  return op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ""));
}

/** The example of `id`, with ids that exist in this sandbox and a fresh idempotency key. */
async function realExample(id: OperationId): Promise<Example> {
  const example = structuredClone(operationExamples[id]) as Example;
  if (example.params?.subAccountId) example.params.subAccountId = ids.subAccountId;
  if (example.params?.transactionId) {
    example.params.transactionId =
      id === "getStableTransaction" ? ids.stableTransactionId : ids.transactionId;
  }
  if (example.params?.orderId) example.params.orderId = ids.orderId;
  if (example.query && "token" in example.query) example.query.token = await freshToken();
  if (example.idempotencyKey) example.idempotencyKey = `${example.idempotencyKey}-${++keyCounter}`;
  return example;
}

function send(id: OperationId, example: Example, extra: CallOptions = {}) {
  const op: OperationSpec = operations[id];
  return sb.api(op.method, pathOf(op, example.params), {
    ...(example.query && { query: example.query }),
    ...(op.body && { body: example.body }),
    ...(example.idempotencyKey && { idem: example.idempotencyKey }),
    ...extra,
  });
}

beforeAll(async () => {
  const accounts = await sb.control("GET", "/accounts");
  const subAccountId = accounts.body.data.accounts[0].subAccountIds[0];
  const txn = await send("withdrawToBank", {
    ...operationExamples.withdrawToBank,
    idempotencyKey: "seed-txn",
  });
  const stable = await send("withdrawStable", {
    ...operationExamples.withdrawStable,
    params: { subAccountId },
    idempotencyKey: "seed-stx",
  });
  const order = await send("createOrder", {
    ...operationExamples.createOrder,
    idempotencyKey: "seed-ord",
  });
  ids = {
    subAccountId,
    transactionId: txn.body.data.transactionId,
    stableTransactionId: stable.body.data.transactionId,
    orderId: order.body.data.orderId,
  };
});

afterEach(async () => {
  expect(await sb.invariants()).toEqual({ ok: true, violations: [] });
});

describe("every operation over HTTP", () => {
  it.each(OPERATION_IDS)("%s answers 200 with the contract's data shape", async (id) => {
    const op: OperationSpec = operations[id];
    const res = await send(id, await realExample(id));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.success).toBe(true);
    expect(typeof res.body.message).toBe("string");
    expect(op.data.safeParse(res.body.data).success, JSON.stringify(res.body.data)).toBe(true);
    expect(res.headers["x-request-id"]).toMatch(/^req_/);
  });
});

describe("validation over HTTP names the field and the rule", () => {
  const refused = limitCases.filter((c) => c.rule !== null);
  it.each(refused.map((c) => [`${c.op} ${c.part}.${c.field} ${c.rule}`, c] as const))(
    "%s",
    async (_, c) => {
      const example = await realExample(c.op);
      const part = { ...((example as Record<string, unknown>)[c.part] as Record<string, unknown>) };
      if (c.value === MISSING) delete part[c.field];
      else part[c.field] = c.value;
      (example as Record<string, unknown>)[c.part] = part;
      const res = await send(c.op, example);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body).toMatchObject({ success: false, code: "validation_error" });
      expect(res.body.message).toContain(`${c.field}: ${c.rule}`);
      expect(res.body.errors).toContainEqual(expect.objectContaining({ field: c.field }));
      if (example.idempotencyKey) {
        const entries = (await sb.control("GET", "/ledger")).body.data.entries;
        expect(
          entries.filter(
            (e: { idempotencyKey: string }) => e.idempotencyKey === example.idempotencyKey,
          ),
        ).toEqual([]);
      }
    },
  );

  it("refuses an idempotency key longer than the contract allows", async () => {
    const example = await realExample("withdrawToBank");
    const res = await send("withdrawToBank", { ...example, idempotencyKey: "k".repeat(256) });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe("idempotencykey: at most 255 characters");
  });

  it("requires the idempotencykey header on IDEM operations", async () => {
    for (const id of OPERATION_IDS.filter((x) => operations[x].idempotent)) {
      const example = await realExample(id);
      delete example.idempotencyKey;
      const res = await send(id, example);
      expect(res.status, id).toBe(400);
      expect(res.body.message).toBe("idempotencykey: required");
    }
  });
});

describe("routing and body errors, all in the envelope", () => {
  const cases: [string, string, string, CallOptions, number, string][] = [
    ["unknown route", "GET", "/nope", {}, 404, "not_found"],
    ["wrong method", "DELETE", "/wallet", {}, 405, "method_not_allowed"],
    ["wrong method on a parameterised path", "POST", "/order/ord_1", {}, 405, "method_not_allowed"],
    ["malformed JSON", "POST", "/wallet", { rawBody: '{"currency":' }, 400, "validation_error"],
    [
      "oversized body",
      "POST",
      "/wallet",
      { rawBody: JSON.stringify({ currency: "x".repeat(2_000_000) }) },
      413,
      "payload_too_large",
    ],
    [
      "not JSON",
      "POST",
      "/wallet",
      { rawBody: "currency=NGN", contentType: "application/x-www-form-urlencoded" },
      415,
      "unsupported_media_type",
    ],
    ["no body at all", "POST", "/wallet", {}, 400, "validation_error"],
    ["bad URL encoding", "GET", "/order/%E0%A4%A", {}, 400, "validation_error"],
  ];
  it.each(cases)("%s", async (_, method, path, options, status, code) => {
    const res = await sb.api(method, path, options);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ success: false, code });
    expect(typeof res.body.message).toBe("string");
  });

  it("says which methods a path allows", async () => {
    const res = await sb.api("PUT", "/transactions");
    expect(res.headers.allow).toBe("GET");
  });
});

describe("authentication", () => {
  const key = "sk_sandbox_CANARY_never_echo_1";
  const cases: [string, string | null, string][] = [
    ["missing key", null, "missing x-api-key header"],
    ["unknown sandbox key", key, "unknown sandbox API key"],
    [
      "production key",
      "sk_live_CANARY_never_echo_2",
      "a production key was sent to the sandbox; use a sandbox key (sk_sandbox_...)",
    ],
    ["key of no known form", "CANARY_never_echo_3", "API key is not a sandbox key"],
  ];
  it.each(cases)("%s: 401 that says which, without echoing the key", async (_, k, message) => {
    const res = await sb.api("GET", "/order/my-orders", { key: k });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ success: false, message, code: "unauthorized" });
    expect(JSON.stringify(res.body)).not.toContain("CANARY");
  });

  it("refuses before validating, so nothing about the request leaks", async () => {
    const res = await sb.api("POST", "/wallet", { key: null, body: { currency: "nope" } });
    expect(res.status).toBe(401);
  });
});
