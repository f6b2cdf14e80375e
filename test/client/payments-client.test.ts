import { inspect } from "node:util";
import { Agent } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  PaymentsAuthenticationError,
  PaymentsClient,
  PaymentsConnectionError,
  PaymentsError,
  PaymentsIdempotencyInFlightError,
  PaymentsIdempotencyKeyReusedError,
  PaymentsInsufficientFundsError,
  PaymentsNotFoundError,
  PaymentsRateLimitError,
  PaymentsResponseError,
  PaymentsServerError,
  PaymentsTimeoutError,
  PaymentsValidationError,
} from "../../src/client/index.js";
import { OPERATION_IDS, type OperationSpec, operations } from "../../src/contract/index.js";
import { operationExamples } from "../fixtures/operation-examples.js";
import { responseExamples } from "../fixtures/response-examples.js";
import {
  type Reply,
  type ScriptedServer,
  startScriptedServer,
} from "../helpers/scripted-server.js";

const API_KEY = "sk_sandbox_client_test_key";
let server: ScriptedServer;
let client: PaymentsClient;

beforeAll(async () => {
  server = await startScriptedServer();
  client = new PaymentsClient({
    baseUrl: server.baseUrl,
    apiKey: API_KEY,
    requestTimeoutMs: 2_000,
  });
});
afterAll(async () => {
  await client.close();
  await server.close();
});
afterEach(() => {
  server.requests.length = 0;
});

type AnyInput = {
  params?: Record<string, string>;
  query?: Record<string, unknown>;
  body?: unknown;
  idempotencyKey?: string;
};
const callAny = (c: PaymentsClient, id: string, input: unknown) =>
  (c as unknown as Record<string, (i: unknown) => Promise<unknown>>)[id]?.(input);

describe("PaymentsClient requests", () => {
  it.each(OPERATION_IDS)("%s sends the right method, path, query, headers and body", async (id) => {
    const op: OperationSpec = operations[id];
    const input = operationExamples[id] as AnyInput;
    server.reply({
      status: 200,
      body: { success: true, message: "ok", data: responseExamples[id] },
    });

    const data = await callAny(client, id, input);

    expect(data).toEqual(responseExamples[id]);
    expect(server.requests).toHaveLength(1);
    const req = server.requests[0];
    if (!req) throw new Error("no request");
    expect(req.method).toBe(op.method);

    let path = `/api/v1${op.path}`;
    for (const [name, value] of Object.entries(input.params ?? {})) {
      path = path.replace(`{${name}}`, encodeURIComponent(value));
    }
    const url = new URL(req.url, "http://x");
    expect(url.pathname).toBe(path);
    const expectedQuery = Object.fromEntries(
      Object.entries(input.query ?? {}).map(([k, v]) => [k, String(v)]),
    );
    expect(Object.fromEntries(url.searchParams)).toEqual(expectedQuery);

    expect(req.headers["x-api-key"]).toBe(API_KEY);
    if (op.idempotent) expect(req.headers.idempotencykey).toBe(input.idempotencyKey);
    else expect(req.headers.idempotencykey).toBeUndefined();

    if (op.body) {
      expect(req.headers["content-type"]).toBe("application/json");
      expect(JSON.parse(req.body)).toEqual(input.body);
    } else {
      expect(req.body).toBe("");
    }
  });

  it("encodes path ids so that they cannot change the path, and refuses '/', '.' and '..'", async () => {
    server.reply({
      status: 200,
      body: { success: true, message: "ok", data: responseExamples.getOrder },
    });
    await client.getOrder({ params: { orderId: "ord?x=1#y" } });
    expect(server.requests[0]?.url).toBe("/api/v1/order/ord%3Fx%3D1%23y");
    for (const orderId of ["../wallet?x=1", "..", ".", "a/b", "ord 1"])
      await expect(client.getOrder({ params: { orderId } })).rejects.toThrow(
        /params\.orderId: must/,
      );
    expect(server.requests).toHaveLength(1);
  });

  it("sends the JSON body on the GET of identity verification (4.7)", async () => {
    server.reply({
      status: 200,
      body: { success: true, message: "ok", data: responseExamples.initiateIdentityVerification },
    });
    await client.initiateIdentityVerification({ body: { value: "123" } });
    expect(server.requests[0]?.method).toBe("GET");
    expect(server.requests[0]?.body).toBe('{"value":"123"}');
  });

  it("refuses a base URL that does not end in /v1", () => {
    expect(
      () => new PaymentsClient({ baseUrl: "http://127.0.0.1:1/api", apiKey: API_KEY }),
    ).toThrow(/ending in \/v1/);
  });

  it("uses an injected dispatcher and leaves closing it to its owner", async () => {
    const agent = new Agent();
    const own = new PaymentsClient({ baseUrl: server.baseUrl, apiKey: API_KEY, dispatcher: agent });
    server.reply({
      status: 200,
      body: { success: true, message: "ok", data: responseExamples.listOrders },
    });
    await own.listOrders();
    await own.close();
    await own.close();
    expect(agent.closed).toBe(false);
    const again = new PaymentsClient({
      baseUrl: server.baseUrl,
      apiKey: API_KEY,
      dispatcher: agent,
    });
    await expect(again.listOrders()).resolves.toEqual(responseExamples.listOrders);
    await agent.close();
  });
});

interface ErrorCase {
  readonly name: string;
  readonly reply: Reply;
  readonly type: abstract new (...args: never[]) => PaymentsError;
  readonly code: string;
  readonly reached: boolean;
  readonly retryAfterMs?: number;
}

const envelope = (message: string, code?: string) => ({
  success: false,
  message,
  ...(code ? { code } : {}),
});

const errorCases: ErrorCase[] = [
  {
    name: "400 validation",
    reply: {
      status: 400,
      body: envelope("accountNumber: at most 10 characters", "validation_error"),
    },
    type: PaymentsValidationError,
    code: "validation_error",
    reached: true,
  },
  {
    name: "400 insufficient funds",
    reply: { status: 400, body: envelope("insufficient balance", "insufficient_funds") },
    type: PaymentsInsufficientFundsError,
    code: "insufficient_funds",
    reached: true,
  },
  {
    name: "401",
    reply: { status: 401, body: envelope("missing key", "unauthorized") },
    type: PaymentsAuthenticationError,
    code: "authentication_failed",
    reached: true,
  },
  {
    name: "403",
    reply: { status: 403, body: envelope("forbidden") },
    type: PaymentsAuthenticationError,
    code: "authentication_failed",
    reached: true,
  },
  {
    name: "404",
    reply: { status: 404, body: envelope("no such transaction", "not_found") },
    type: PaymentsNotFoundError,
    code: "not_found",
    reached: true,
  },
  {
    name: "409 in flight",
    reply: { status: 409, body: envelope("in flight", "idempotency_in_flight") },
    type: PaymentsIdempotencyInFlightError,
    code: "idempotency_in_flight",
    reached: true,
  },
  {
    name: "422 key reused",
    reply: { status: 422, body: envelope("key reused", "idempotency_key_reused") },
    type: PaymentsIdempotencyKeyReusedError,
    code: "idempotency_key_reused",
    reached: true,
  },
  {
    name: "429 seconds",
    reply: {
      status: 429,
      body: envelope("slow down", "rate_limited"),
      headers: { "retry-after": "2" },
    },
    type: PaymentsRateLimitError,
    code: "rate_limited",
    reached: true,
    retryAfterMs: 2000,
  },
  {
    name: "500",
    reply: { status: 500, body: envelope("boom", "internal_error") },
    type: PaymentsServerError,
    code: "server_error",
    reached: true,
  },
  {
    name: "502 not JSON",
    reply: { status: 502, raw: "<html>bad gateway</html>" },
    type: PaymentsServerError,
    code: "server_error",
    reached: true,
  },
  {
    name: "503",
    reply: { status: 503, body: envelope("unavailable") },
    type: PaymentsServerError,
    code: "server_error",
    reached: true,
  },
  {
    name: "200 not JSON",
    reply: { status: 200, raw: "not json" },
    type: PaymentsResponseError,
    code: "invalid_response",
    reached: true,
  },
  {
    name: "200 not the envelope",
    reply: { status: 200, body: { success: true, data: { id: 1 } } },
    type: PaymentsResponseError,
    code: "invalid_response",
    reached: true,
  },
  {
    name: "dropped after send",
    reply: { drop: true },
    type: PaymentsConnectionError,
    code: "connection_error",
    reached: true,
  },
];

describe("PaymentsClient errors", () => {
  it.each(errorCases.map((c) => [c.name, c] as const))("%s", async (_, c) => {
    server.reply(c.reply);
    const error = await client
      .getTransaction({ params: { transactionId: "txn_1" } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(c.type);
    expect(error).toBeInstanceOf(PaymentsError);
    const e = error as PaymentsError;
    expect(e.code).toBe(c.code);
    expect(e.operation).toBe("getTransaction");
    expect(e.mayHaveReachedServer).toBe(c.reached);
    if (c.retryAfterMs !== undefined)
      expect((e as PaymentsRateLimitError).retryAfterMs).toBe(c.retryAfterMs);
  });

  it("carries status, upstream message, upstream code and request id", async () => {
    server.reply({
      status: 400,
      body: envelope("accountNumber: at most 10 characters", "validation_error"),
      headers: { "x-request-id": "req_42" },
    });
    const e = (await client
      .withdrawToBank(operationExamples.withdrawToBank)
      .catch((x: unknown) => x)) as PaymentsError;
    expect(e.status).toBe(400);
    expect(e.upstreamCode).toBe("validation_error");
    expect(e.requestId).toBe("req_42");
    expect(e.message).toBe("withdrawToBank: accountNumber: at most 10 characters");
    expect(e.body).toEqual(envelope("accountNumber: at most 10 characters", "validation_error"));
  });

  it("reads Retry-After given as an HTTP date", async () => {
    const when = new Date(Date.now() + 5_000).toUTCString();
    server.reply({ status: 429, body: envelope("slow down"), headers: { "retry-after": when } });
    const e = (await client.listOrders().catch((x: unknown) => x)) as PaymentsRateLimitError;
    expect(e.retryAfterMs).toBeGreaterThan(3_000);
    expect(e.retryAfterMs).toBeLessThanOrEqual(5_000);
  });

  it("turns a server that never answers into a timeout that may have reached it", async () => {
    server.reply({ hang: true });
    const quick = new PaymentsClient({
      baseUrl: server.baseUrl,
      apiKey: API_KEY,
      requestTimeoutMs: 200,
    });
    const e = await quick.listOrders().catch((x: unknown) => x);
    await quick.close();
    expect(e).toBeInstanceOf(PaymentsTimeoutError);
    expect((e as PaymentsError).mayHaveReachedServer).toBe(true);
  });

  it("turns a refused connection into a connection error that never reached the server", async () => {
    const closed = await startScriptedServer();
    const baseUrl = closed.baseUrl;
    await closed.close();
    const dead = new PaymentsClient({ baseUrl, apiKey: API_KEY });
    const e = await dead.listOrders().catch((x: unknown) => x);
    await dead.close();
    expect(e).toBeInstanceOf(PaymentsConnectionError);
    expect((e as PaymentsError).mayHaveReachedServer).toBe(false);
  });

  it("gives up on an oversized body", async () => {
    server.reply({ status: 200, raw: "x".repeat(2048) });
    const small = new PaymentsClient({
      baseUrl: server.baseUrl,
      apiKey: API_KEY,
      maxResponseBytes: 1024,
    });
    const e = await small.listOrders().catch((x: unknown) => x);
    await small.close();
    expect(e).toBeInstanceOf(PaymentsResponseError);
  });
});

describe("the API key never leaks through an error", () => {
  const CANARY = "sk_sandbox_CANARY_7f3a9c";
  const canaryReplies: Reply[] = [
    ...errorCases.map((c) => c.reply),
    { status: 400, body: envelope(`bad key ${CANARY}`, "validation_error") },
    {
      status: 401,
      body: { success: false, message: `unknown key ${CANARY}`, echo: { key: CANARY } },
    },
    { status: 500, raw: `upstream crashed with key=${CANARY}` },
    { status: 200, raw: `{"success":true,"message":"${CANARY}","data":[]}` },
    { hang: true },
  ];

  it.each(canaryReplies.map((r, i) => [i, r] as const))("error path %i", async (_, reply) => {
    server.reply(reply);
    const c = new PaymentsClient({
      baseUrl: server.baseUrl,
      apiKey: CANARY,
      requestTimeoutMs: 200,
    });
    const e = await c.getTransaction({ params: { transactionId: "t" } }).catch((x: unknown) => x);
    await c.close();
    expect(e).toBeInstanceOf(PaymentsError);
    expect(server.requests.at(-1)?.headers["x-api-key"]).toBe(CANARY);
    const err = e as PaymentsError;
    expect(err.message).not.toContain(CANARY);
    expect(JSON.stringify(err)).not.toContain(CANARY);
    expect(JSON.stringify(Object.entries(err))).not.toContain(CANARY);
    expect(inspect(err, { depth: 10 })).not.toContain(CANARY);
    expect(String(err.stack)).not.toContain(CANARY);
  });

  it("even when the connection is refused", async () => {
    const closed = await startScriptedServer();
    await closed.close();
    const c = new PaymentsClient({ baseUrl: closed.baseUrl, apiKey: CANARY });
    const e = await c.listOrders().catch((x: unknown) => x);
    await c.close();
    expect(inspect(e, { depth: 10 })).not.toContain(CANARY);
    expect(JSON.stringify(e)).not.toContain(CANARY);
  });
});

describe("a request that must be written by a deadline (sendBy)", () => {
  const OK: Reply = { status: 200, body: { success: true, message: "ok", data: {} } };

  it("is not sent when it could only be written after it, and says that it never reached the server", async () => {
    // One connection, held by a request the server never answers, until the client gives up.
    server.reply({ hang: true });
    const one = new PaymentsClient({
      baseUrl: server.baseUrl,
      apiKey: API_KEY,
      connections: 1,
      requestTimeoutMs: 300,
    });
    const lookUp = (sendBy?: number) =>
      one
        .send("getTransaction", { params: { transactionId: "txn_1" } }, { sendBy })
        .catch((e: unknown) => e);
    const holding = lookUp();
    // Waits for the connection, which is free only after the first request's 300 ms.
    const waiting = lookUp(performance.now() + 100);
    expect(await holding).toBeInstanceOf(PaymentsTimeoutError);
    const late = await waiting;
    expect(late).toBeInstanceOf(PaymentsConnectionError);
    expect((late as PaymentsError).mayHaveReachedServer).toBe(false);
    expect((late as PaymentsError).message).toContain(
      "not written to a connection by its deadline",
    );
    // Already past: refused before it takes a connection.
    server.reply(OK);
    const past = await lookUp(performance.now() - 1);
    expect((past as PaymentsError).mayHaveReachedServer).toBe(false);
    expect(server.requests).toHaveLength(1);
    // In time, it is sent and answered.
    expect(await lookUp(performance.now() + 60_000)).toMatchObject({ message: "ok" });
    expect(server.requests).toHaveLength(2);
    await one.close();
  });
});
