import { Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import { accountQueueName } from "../../src/queues/queue-names.js";
import { bankJob, useLoggedService } from "../helpers/logged-service.js";
import { singleRedis } from "../helpers/redis.js";

const h = useLoggedService({ MONEYQ_API_BODY_LIMIT_BYTES: "200000" });

interface Case {
  readonly method: "GET" | "POST";
  readonly path: string;
  /** A string is sent as it is; anything else as JSON. */
  readonly body?: unknown;
  readonly type?: string;
  /** Text the answer's error (message, details or rows) must contain: the field or the rule. */
  readonly names: string | RegExp;
  readonly status?: number;
}

const job = bankJob({ idempotencyKey: "table-1" });
const jobId = `j_${"0".repeat(40)}`;
const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
const CSV_HEADER = "reference,amount,currency,bankCode,accountNumber,accountName,bankName";

/** Malformed inputs of every authenticated route: wrong types and content types, empty,
 * oversized, nested, unknown fields, bad encodings. */
const CASES: readonly Case[] = [
  // POST /v1/jobs
  { method: "POST", path: "/v1/jobs", body: { ...job, kind: 5 }, names: "body.kind" },
  {
    method: "POST",
    path: "/v1/jobs",
    body: { ...job, request: "all of it" },
    names: "body.request",
  },
  {
    method: "POST",
    path: "/v1/jobs",
    body: { ...job, request: { body: { ...job.request.body, amount: "150" } } },
    names: "request.body.amount: must be a number",
  },
  {
    method: "POST",
    path: "/v1/jobs",
    body: JSON.stringify(job),
    type: "text/plain",
    names: "application/json",
    status: 415,
  },
  {
    method: "POST",
    path: "/v1/jobs",
    body: "kind=payout.bank",
    type: "application/x-www-form-urlencoded",
    names: "application/json",
    status: 415,
  },
  {
    method: "POST",
    path: "/v1/jobs",
    body: "a,b\n1,2\n",
    type: "text/csv",
    names: "application/json",
    status: 415,
  },
  { method: "POST", path: "/v1/jobs", body: "", names: "body.kind: required" },
  { method: "POST", path: "/v1/jobs", body: {}, names: "body.kind: required" },
  { method: "POST", path: "/v1/jobs", body: [], names: "body: must be an object" },
  { method: "POST", path: "/v1/jobs", body: "null", names: "body.kind: required" },
  {
    method: "POST",
    path: "/v1/jobs",
    body: { ...job, metadata: { pad: "x".repeat(70_000) } },
    names: '"rule":"at most 65536 bytes"',
    status: 413,
  },
  {
    method: "POST",
    path: "/v1/jobs",
    body: `{"kind":"payout.bank","metadata":${deep(100)}}`,
    names: "nested deeper than 64 levels",
  },
  {
    method: "POST",
    path: "/v1/jobs",
    body: { ...job, metadata: JSON.parse(`${'{"a":'.repeat(17)}1${"}".repeat(17)}`) },
    names: "nested deeper than 16 levels",
  },
  {
    method: "POST",
    path: "/v1/jobs",
    body: { ...job, urgency: "high" },
    names: "body.urgency: unknown field",
  },
  {
    method: "POST",
    path: "/v1/jobs",
    body: { ...job, priority: "high" },
    names: 'body.priority","rule":"must be one of',
  },
  {
    method: "POST",
    path: "/v1/jobs",
    body: { ...job, request: { body: { ...job.request.body, iban: "x" } } },
    names: "request.body.iban: unknown field",
  },
  { method: "POST", path: "/v1/jobs", body: '{"kind":"payout.bank",', names: "not valid JSON" },
  {
    method: "POST",
    path: "/v1/jobs",
    body: JSON.stringify(job).replace('"amount":150', '"amount":1e400'),
    names: "must be a finite number",
  },
  { method: "POST", path: "/v1/jobs?dryRun=true", body: job, names: "query.dryRun: unknown field" },
  {
    method: "POST",
    path: "/v1/jobs",
    body: { ...job, account: "alpha\u0000" },
    names: "body.account: must be an account alias",
  },
  // GET /v1/jobs and /v1/jobs/:jobId
  { method: "GET", path: "/v1/jobs", names: "query.idempotencyKey: required" },
  {
    method: "GET",
    path: "/v1/jobs?idempotencyKey=a&idempotencyKey=b",
    names: "query.idempotencyKey: must be a string",
  },
  {
    method: "GET",
    path: `/v1/jobs?idempotencyKey=${"k".repeat(256)}`,
    names: "at most 255 characters",
  },
  { method: "GET", path: "/v1/jobs?idempotencyKey=k&sort=asc", names: "query.sort: unknown field" },
  { method: "GET", path: "/v1/jobs/abc", names: "params.jobId: must be a job id" },
  { method: "GET", path: `/v1/jobs/j_${"g".repeat(40)}`, names: "params.jobId" },
  { method: "GET", path: "/v1/jobs/%ZZ", names: "percent-encoding" },
  { method: "GET", path: `/v1/jobs/${"j".repeat(3000)}`, names: "at most 2048 characters" },
  // POST /v1/batches, JSON and CSV
  {
    method: "POST",
    path: "/v1/batches",
    body: { kind: "payout.cash", rows: [{}] },
    names: "body.kind: must be one of",
  },
  {
    method: "POST",
    path: "/v1/batches",
    body: { kind: "payout.bank", rows: "r1" },
    names: "body.rows: must be an array",
  },
  {
    method: "POST",
    path: "/v1/batches",
    body: { kind: "payout.bank", rows: [] },
    names: "at least 1 row",
  },
  {
    method: "POST",
    path: "/v1/batches",
    body: { kind: "payout.bank", rows: [5] },
    names: "must be an object",
    status: 422,
  },
  {
    method: "POST",
    path: "/v1/batches",
    body: { kind: "payout.bank", rows: [{ reference: "r", iban: 1 }] },
    names: "unknown column",
    status: 422,
  },
  {
    method: "POST",
    path: "/v1/batches",
    body: { kind: "payout.bank", rows: [{}], urgency: 1 },
    names: "body.urgency: unknown field",
  },
  {
    method: "POST",
    path: "/v1/batches",
    body: { kind: "payout.bank", rows: [{}], priority: "asap" },
    names: "body.priority",
  },
  {
    method: "POST",
    path: "/v1/batches",
    body: { kind: "payout.bank", rows: [{}], batchId: "../x" },
    names: "body.batchId",
  },
  {
    method: "POST",
    path: "/v1/batches",
    body: { kind: "payout.bank", rows: [{}], dryRun: "yes" },
    names: "body.dryRun: must be a boolean",
  },
  {
    method: "POST",
    path: "/v1/batches",
    body: `{"kind":"payout.bank","rows":[${deep(200)}]}`,
    names: "nested deeper than 64 levels",
  },
  {
    method: "POST",
    path: "/v1/batches",
    body: "<batch/>",
    type: "application/xml",
    names: "application/json, text/csv",
    status: 415,
  },
  { method: "POST", path: "/v1/batches", body: "", names: "body.kind: required" },
  {
    method: "POST",
    path: "/v1/batches",
    type: "text/csv",
    body: `${CSV_HEADER}\n`,
    names: "query.kind: required",
  },
  {
    method: "POST",
    path: "/v1/batches?kind=payout.bank",
    type: "text/csv",
    body: "",
    names: "the file has no rows",
  },
  {
    method: "POST",
    path: "/v1/batches?kind=payout.bank",
    type: "text/csv",
    body: `${CSV_HEADER}\n`,
    names: "the file has no rows",
  },
  {
    method: "POST",
    path: "/v1/batches?kind=payout.bank",
    type: "text/csv",
    body: `${CSV_HEADER},iban\n`,
    names: "iban: unknown column",
  },
  {
    method: "POST",
    path: "/v1/batches?kind=payout.bank",
    type: "text/csv",
    body: `${CSV_HEADER}\n"r1,10\n`,
    names: "row 1",
  },
  {
    method: "POST",
    path: "/v1/batches?kind=payout.bank",
    type: "text/csv",
    body: `${CSV_HEADER}\nr1,1,NGN,044,0123456789,Ada "Obi",B\n`,
    names: /"code":"invalid_csv".*Invalid Opening Quote.*line 2/,
  },
  {
    // A row above it is valid: the file is refused whole all the same (nothing enqueued below).
    method: "POST",
    path: "/v1/batches?kind=payout.bank&allowPartial=true",
    type: "text/csv",
    body: `# notes\n${CSV_HEADER}\nr1,1,NGN,044,0123456789,A,B\n#1042,1,NGN,044,0123456789,A,B\n`,
    names: /"code":"commented_line".*line 4: starts with #/,
  },
  {
    method: "POST",
    path: "/v1/batches?kind=payout.bank&force=1",
    type: "text/csv",
    body: `${CSV_HEADER}\n`,
    names: "query.force: unknown field",
  },
  {
    method: "POST",
    path: "/v1/batches?kind=payout.bank&dryRun=maybe",
    type: "text/csv",
    body: `${CSV_HEADER}\n`,
    names: "query.dryRun",
  },
  {
    method: "POST",
    path: "/v1/batches?kind=payout.bank",
    type: "text/csv",
    body: `${CSV_HEADER}\n${"r,1,NGN,044,0123456789,A,B\n".repeat(10_000)}`,
    names: '"rule":"the file is larger than 200000 bytes"',
    status: 413,
  },
  {
    method: "POST",
    path: "/v1/batches?kind=payout.bank",
    type: "text/csv",
    body: `${CSV_HEADER}\nr1,1e-9,NGN,044,0123456789,A,B\n`,
    names: "amount",
    status: 422,
  },
  // GET /v1/batches/:batchId and its results
  {
    method: "GET",
    path: `/v1/batches/${"b".repeat(200)}`,
    names: "params.batchId: must be 1 to 64 letters",
  },
  { method: "GET", path: "/v1/batches/%ZZ", names: "percent-encoding" },
  { method: "GET", path: "/v1/batches/a%20b", names: "params.batchId" },
  { method: "GET", path: "/v1/batches/none?verbose=1", names: "query.verbose: unknown field" },
  { method: "GET", path: "/v1/batches/none", names: "batch none not found", status: 404 },
  {
    method: "GET",
    path: "/v1/batches/none/results?format=xlsx",
    names: "query.format: must be one of",
  },
  { method: "GET", path: "/v1/batches/%ZZ/results", names: "percent-encoding" },
  // POST /v1/batches/:batchId/cancel
  {
    method: "POST",
    path: "/v1/batches/none/cancel",
    body: { force: true },
    names: "body: must be empty",
  },
  { method: "POST", path: `/v1/batches/${"b".repeat(65)}/cancel`, names: "params.batchId" },
  { method: "POST", path: "/v1/batches/none/cancel", names: "not found", status: 404 },
  // GET /v1/dead-letters and replay
  {
    method: "GET",
    path: "/v1/dead-letters?limit=abc",
    names: "query.limit: must be a whole number",
  },
  { method: "GET", path: "/v1/dead-letters?limit=100000", names: "query.limit: must be 1 to 1000" },
  {
    method: "GET",
    path: "/v1/dead-letters?limit=1&order=desc",
    names: "query.order: unknown field",
  },
  { method: "GET", path: `/v1/dead-letters?account=${"a".repeat(40)}`, names: "query.account" },
  { method: "POST", path: "/v1/dead-letters/j_1/replay", names: "params.jobId" },
  {
    method: "POST",
    path: `/v1/dead-letters/${jobId}/replay`,
    body: { again: true },
    names: "body: must be empty",
  },
  {
    method: "POST",
    path: `/v1/dead-letters/${jobId}/replay?account=beta`,
    names: /may not use account \\"beta\\"/,
    status: 403,
  },
  {
    method: "POST",
    path: `/v1/dead-letters/${jobId}/replay?force=1`,
    names: "query.force: unknown field",
  },
  // Accounts: list, pause, resume
  { method: "GET", path: "/v1/accounts?all=1", names: "query.all: unknown field" },
  {
    method: "POST",
    path: "/v1/accounts/alpha/pause",
    body: { reason: 5 },
    names: "body.reason: must be a string",
  },
  {
    method: "POST",
    path: "/v1/accounts/alpha/pause",
    body: { reason: "r".repeat(501) },
    names: "body.reason: at most 500 characters",
  },
  {
    method: "POST",
    path: "/v1/accounts/alpha/pause",
    body: { reason: "x", until: "tomorrow" },
    names: "body.until: unknown field",
  },
  {
    method: "POST",
    path: "/v1/accounts/alpha/pause",
    body: "reason=x",
    type: "text/plain",
    names: "application/json",
    status: 415,
  },
  {
    method: "POST",
    path: "/v1/accounts/alpha/pause",
    body: `{"reason":${deep(80)}}`,
    names: "nested deeper than 64 levels",
  },
  {
    method: "POST",
    path: "/v1/accounts/alpha/pause",
    body: '{"reason":"x"',
    names: "not valid JSON",
  },
  {
    method: "POST",
    path: "/v1/accounts/alpha/pause",
    body: '{"__proto__":{"reason":"x"}}',
    names: /the key \\"__proto__\\" is not allowed/,
  },
  {
    method: "POST",
    path: `/v1/accounts/${"a".repeat(40)}/pause`,
    names: "params.alias: must be an account alias",
  },
  {
    method: "POST",
    path: "/v1/accounts/alpha/resume",
    body: { now: true },
    names: "body: must be empty",
  },
  { method: "POST", path: "/v1/accounts/%ZZ/resume", names: "percent-encoding" },
  // System routes take no input: other methods and paths are answered in the same shape.
  { method: "POST", path: "/healthz", body: {}, names: "allowed: GET", status: 405 },
  { method: "POST", path: "/metrics", names: "allowed: GET", status: 405 },
  { method: "GET", path: "/openapi.json/%ZZ", names: "percent-encoding" },
  { method: "GET", path: "/readyz/x", names: "no route", status: 404 },
];

const POST_ROUTES = [
  "/v1/jobs",
  "/v1/batches",
  "/v1/batches/b1/cancel",
  `/v1/dead-letters/${jobId}/replay`,
  "/v1/accounts/alpha/pause",
  "/v1/accounts/alpha/resume",
];
const GET_ROUTES = [
  "/v1/jobs?idempotencyKey=k",
  `/v1/jobs/${jobId}`,
  "/v1/batches/b1",
  "/v1/batches/b1/results",
  "/v1/dead-letters",
  "/v1/accounts",
];

/** The same four malformed bodies on every POST route, and an unknown parameter on every GET. */
const EVERY_ROUTE: readonly Case[] = [
  ...POST_ROUTES.flatMap((path): Case[] => [
    {
      method: "POST",
      path,
      body: "{}",
      type: "text/plain",
      names: "application/json",
      status: 415,
    },
    {
      method: "POST",
      path,
      body: `{"pad":"${"x".repeat(250_000)}"}`,
      // The rule names the route's own limit: a batch upload's, or one job's.
      names: `"rule":"at most ${path === "/v1/batches" ? 200_000 : 65_536} bytes"`,
      status: 413,
    },
    { method: "POST", path, body: `{"a":${deep(100)}}`, names: "nested deeper than 64 levels" },
    { method: "POST", path, body: '{"a":1,,}', names: "not valid JSON" },
  ]),
  ...GET_ROUTES.map(
    (path): Case => ({
      method: "GET",
      path: `${path}${path.includes("?") ? "&" : "?"}zzz=1`,
      names: "query.zzz: unknown field",
    }),
  ),
];

describe("every route answers malformed input with a 4xx in moneyq's shape", () => {
  it.each(
    [...CASES, ...EVERY_ROUTE].map(
      (c) =>
        [
          `${c.method} ${c.path.slice(0, 60)} ${String(c.type ?? "")} ${typeof c.body === "string" ? c.body.slice(0, 30) : JSON.stringify(c.body ?? "")?.slice(0, 40)}`,
          c,
        ] as const,
    ),
  )("%s", async (_, c) => {
    const answer = await h.api(c.method, c.path, {
      ...(c.body !== undefined && { body: c.body }),
      ...(c.type !== undefined && { type: c.type }),
    });
    expect(answer.status, answer.text).toBe(c.status ?? 400);
    expect(Object.keys(answer.body)).toEqual(["error"]);
    expect(typeof answer.body.error.code).toBe("string");
    expect(typeof answer.body.error.message).toBe("string");
    // A string is looked for as it is: the field and rule, in `details`, `rows` or the message.
    expect(JSON.stringify(answer.body.error)).toMatch(c.names);
  });

  it("after the table nothing was enqueued, claimed, paused or paid", async () => {
    const connection = h.redis.connect();
    for (const account of ["alpha", "beta"]) {
      const queue = new Queue(accountQueueName(singleRedis, account), {
        connection,
        prefix: h.config().redisPrefix,
      });
      const counts = await queue.getJobCounts();
      await queue.close();
      expect(
        Object.values(counts).reduce((a, b) => a + b, 0),
        account,
      ).toBe(0);
    }
    const keys = await h.redis.keys();
    expect(keys.filter((k) => /:(refs|batch|fp):/.test(k))).toEqual([]);
    const accounts = await h.api("GET", "/v1/accounts");
    expect(accounts.body.accounts.every((a: { paused: boolean }) => !a.paused)).toBe(true);
    const requests = (await h.sb.control("GET", "/requests")).body.data.requests;
    expect(requests).toEqual([]);
    expect(h.lines.filter((l) => l.level >= 50)).toEqual([]);
  });
});
