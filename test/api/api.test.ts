import { describe, expect, it } from "vitest";
import { batchKeys, keyspace } from "../../src/redis/keys.js";
import { BETA_TOKEN, BOTH_TOKEN, bankCsv, until, useService } from "../helpers/service.js";

const h = useService({ MONEYQ_API_BODY_LIMIT_BYTES: "200000" });

const bankJob = (reference: string, extra: Record<string, unknown> = {}) => ({
  kind: "payout.bank",
  batchId: "api-jobs",
  reference,
  request: {
    body: {
      amount: 150,
      currency: "NGN",
      bankCode: "044",
      accountNumber: "0123456789",
      accountName: "Ada Obi",
      bankName: "Access Bank",
      ...extra,
    },
  },
});

/** Idempotency keys with a ledger effect at the sandbox for one account. */
async function effectKeys(accountId: string): Promise<string[]> {
  const entries = (await h.sb.control("GET", "/ledger", { query: { accountId } })).body.data
    .entries as { idempotencyKey: string | null }[];
  return [...new Set(entries.flatMap((e) => (e.idempotencyKey ? [e.idempotencyKey] : [])))];
}

const batchStatus = (id: string, token?: string) =>
  h.api("GET", `/v1/batches/${id}`, token === undefined ? {} : { token });
const finished = (id: string) =>
  until(
    () => batchStatus(id),
    (r) => r.body?.finishedAt !== undefined,
  );

describe("system routes", () => {
  it("answers health, readiness, metrics and the OpenAPI document without a token", async () => {
    expect((await h.api("GET", "/healthz", { token: null })).body).toEqual({ status: "ok" });
    const ready = await h.api("GET", "/readyz", { token: null });
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({
      status: "ready",
      redis: true,
      workers: true,
      shuttingDown: false,
    });
    const metrics = await h.api("GET", "/metrics", { token: null });
    expect(metrics.headers.get("content-type")).toContain("text/plain");
    expect(metrics.text).toContain("moneyq_process_cpu_seconds_total");
    const doc = (await h.api("GET", "/openapi.json", { token: null })).body;
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        "/healthz",
        "/metrics",
        "/openapi.json",
        "/readyz",
        "/v1/accounts",
        "/v1/accounts/{alias}/holds",
        "/v1/accounts/{alias}/holds/{currency}/cancel",
        "/v1/accounts/{alias}/holds/{currency}/release",
        "/v1/accounts/{alias}/holds/{currency}/resume",
        "/v1/accounts/{alias}/pause",
        "/v1/accounts/{alias}/resume",
        "/v1/batches",
        "/v1/batches/{batchId}",
        "/v1/batches/{batchId}/approve",
        "/v1/batches/{batchId}/cancel",
        "/v1/batches/{batchId}/reject",
        "/v1/batches/{batchId}/results",
        "/v1/dead-letters",
        "/v1/dead-letters/{jobId}/replay",
        "/v1/jobs",
        "/v1/jobs/{jobId}",
        "/v1/jobs/{jobId}/approve",
        "/v1/jobs/{jobId}/cancel",
        "/v1/jobs/{jobId}/reject",
        "/v1/jobs/{jobId}/resolve",
        "/v1/jobs/{jobId}/resolve/approve",
        "/v1/me",
        "/v1/resolutions",
        "/v1/webhooks",
        "/v1/webhooks/failed",
        "/v1/webhooks/failed/{eventId}/redeliver",
        "/v1/webhooks/resume",
      ].sort(),
    );
    const submit = doc.paths["/v1/batches"].post;
    expect(Object.keys(submit.requestBody.content)).toEqual(["application/json", "text/csv"]);
    expect(submit.requestBody.content["application/json"].schema.properties.kind.enum).toContain(
      "payout.bank",
    );
    expect(doc.paths["/v1/jobs"].get.parameters.map((p: { name: string }) => p.name)).toEqual([
      "idempotencyKey",
      "account",
    ]);
  });
});

describe("errors share one shape", () => {
  it("401 without a token or with an unknown one, 403 for another token's account", async () => {
    const none = await h.api("GET", "/v1/accounts", { token: null });
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe("unauthenticated");
    const wrong = await h.api("GET", "/v1/accounts", { token: "tok_not_a_real_token_at_all" });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({
      error: { code: "unauthenticated", message: "unknown bearer token" },
    });
    const other = await h.api("POST", "/v1/jobs", { body: { ...bankJob("x"), account: "beta" } });
    expect(other.status).toBe(403);
    expect(other.body.error).toEqual({
      code: "forbidden",
      message: 'this token may not use account "beta"',
    });
  });

  it("404, 405, 415 and 413 in the same shape", async () => {
    const missing = await h.api("GET", "/v1/nothing");
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
    const method = await h.api("PUT", "/v1/batches");
    expect(method.status).toBe(405);
    expect(method.headers.get("allow")).toBe("POST, GET");
    expect(method.body.error.code).toBe("method_not_allowed");
    const media = await h.api("POST", "/v1/jobs", {
      body: "amount=1",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(media.status).toBe(415);
    expect(media.body.error.code).toBe("unsupported_media_type");
    const csvOnJobs = await h.api("POST", "/v1/jobs", { csv: "a,b\n1,2\n" });
    expect(csvOnJobs.status).toBe(415);
    const big = await h.api("POST", "/v1/batches?kind=payout.bank", {
      csv: bankCsv("big", 4000),
    });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe("too_large");
    const bigJson = await h.api("POST", "/v1/jobs", { body: { pad: "x".repeat(300_000) } });
    expect(bigJson.status).toBe(413);
    expect(bigJson.body.error.code).toBe("body_too_large");
    const badJson = await h.api("POST", "/v1/jobs", { body: "{not json" });
    expect(badJson.status).toBe(400);
    expect(badJson.body.error.code).toBe("invalid_body");
  });

  it("names the field and the rule of a bad job, and enqueues nothing", async () => {
    const res = await h.api("POST", "/v1/jobs", {
      body: bankJob("bad-1", { amount: "abc", accountName: undefined }),
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_job");
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([
        { field: "body.request.body.amount", rule: "must be a number" },
        { field: "body.request.body.accountName", rule: "required" },
      ]),
    );
    const unknownKind = await h.api("POST", "/v1/jobs", {
      body: { ...bankJob("bad-2"), kind: "payout.cash" },
    });
    expect(unknownKind.status).toBe(400);
    expect(unknownKind.body.error.details[0].field).toBe("body.kind");
  });
});

describe("jobs", () => {
  it("enqueues one job once, and shows its status by job id and by key, to its own token only", async () => {
    const first = await h.api("POST", "/v1/jobs", { body: bankJob("job-1") });
    expect(first.status).toBe(202);
    const again = await h.api("POST", "/v1/jobs", { body: bankJob("job-1") });
    expect(again.body).toEqual(first.body);
    const { jobId, idempotencyKey } = first.body;
    const done = await until(
      () => h.api("GET", `/v1/jobs/${jobId}`),
      (r) => r.body?.result !== null && r.body?.result !== undefined,
    );
    expect(done.body).toMatchObject({
      jobId,
      account: "alpha",
      kind: "payout.bank",
      idempotencyKey,
      reference: "job-1",
      state: "completed",
      result: { result: "succeeded", upstreamStatus: "SUCCESSFUL" },
    });
    const byKey = await h.api("GET", `/v1/jobs?idempotencyKey=${idempotencyKey}`);
    expect(byKey.body.jobId).toBe(jobId);
    expect((await effectKeys("acct_alpha")).filter((k) => k === idempotencyKey)).toHaveLength(1);
    const foreign = await h.api("GET", `/v1/jobs/${jobId}`, { token: BETA_TOKEN });
    expect(foreign.status).toBe(404);
    const badId = await h.api("GET", "/v1/jobs/123");
    expect(badId.status).toBe(400);
    expect(badId.body.error.details[0].field).toBe("params.jobId");
  });
});

describe("batches", () => {
  const mixed = bankCsv("mix", 6, (n, c) => {
    if (n === 2) c.amount = "12.5O";
    if (n === 4) c.accountNumber = "";
    if (n === 5) c.reference = "mix-1";
  });

  it("a dry run reports every bad row with its column and rule, and enqueues nothing", async () => {
    const res = await h.api("POST", "/v1/batches?kind=payout.bank&dryRun=true", { csv: mixed });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      dryRun: true,
      created: false,
      rows: 6,
      accepted: 3,
      invalid: 2,
      duplicates: 1,
    });
    expect(res.body.issues).toEqual([
      {
        type: "invalid",
        row: 2,
        reference: "mix-2",
        column: "amount",
        rule: "must be a number (digits, optional decimal point)",
      },
      { type: "invalid", row: 4, reference: "mix-4", column: "accountNumber", rule: "required" },
      {
        type: "duplicate",
        row: 5,
        reference: "mix-1",
        column: "reference",
        rule: "the same reference as row 1",
      },
    ]);
    expect((await batchStatus(res.body.batchId)).status).toBe(404);
  });

  it("refuses a batch with bad rows whole, listing them (422)", async () => {
    const res = await h.api("POST", "/v1/batches?kind=payout.bank", { csv: mixed });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("batch_refused");
    expect(res.body.error.rows.map((r: { row: number }) => r.row)).toEqual([2, 4, 5]);
  });

  it("refuses a file whose header is wrong, naming the columns", async () => {
    const res = await h.api("POST", "/v1/batches?kind=payout.bank", {
      csv: "reference,ammount,currency\nr-1,1,NGN\n",
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_header");
    expect(res.body.error.details.map((d: { rule: string }) => d.rule)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^ammount: unknown column for payout.bank/),
        "amount: required column missing",
        "bankCode: required column missing",
      ]),
    );
    const noKind = await h.api("POST", "/v1/batches", { csv: "a\n1\n" });
    expect(noKind.status).toBe(400);
    expect(noKind.body.error.details[0].field).toBe("query.kind");
  });

  it("refuses a file with a line starting with # below its header, naming the line; quoted, it is a row", async () => {
    const hashed = bankCsv("hash", 3, (n, c) => {
      if (n === 2) c.reference = "#1042";
    });
    const res = await h.api("POST", "/v1/batches?kind=payout.bank&allowPartial=true", {
      csv: hashed,
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("commented_line");
    expect(res.body.error.details).toEqual([
      {
        field: "file",
        rule:
          "line 3: starts with # (a note or the template's example row): delete the line or " +
          'remove the #; write a value that starts with # in quotes ("#1042")',
      },
    ]);
    const quoted = await h.api("POST", "/v1/batches?kind=payout.bank&dryRun=true", {
      csv: hashed.replace("#1042", '"#1042"'),
    });
    expect(quoted.status).toBe(200);
    expect(quoted.body).toMatchObject({ rows: 3, accepted: 3, invalid: 0, issues: [] });
  });

  it("accepts the valid rows with allowPartial, runs them, and reports every row", async () => {
    const before = await effectKeys("acct_alpha");
    const res = await h.api("POST", "/v1/batches?kind=payout.bank&allowPartial=true", {
      csv: mixed,
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ created: true, accepted: 3, invalid: 2, duplicates: 1 });
    const id = res.body.batchId;
    const done = await finished(id);
    expect(done.body).toMatchObject({
      state: "completed_with_failures",
      rows: 6,
      accepted: 3,
      finished: 3,
      progress: 1,
      counts: { succeeded: 3, failed: 0, cancelled: 0 },
    });
    const jsonl = await h.api("GET", `/v1/batches/${id}/results`);
    expect(jsonl.headers.get("content-type")).toContain("application/x-ndjson");
    const lines = jsonl.text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.row, l.result])).toEqual([
      [1, "succeeded"],
      [2, "invalid"],
      [3, "succeeded"],
      [4, "invalid"],
      [5, "duplicate"],
      [6, "succeeded"],
    ]);
    expect(lines[1].error).toBe("amount: must be a number (digits, optional decimal point)");
    const csv = await h.api("GET", `/v1/batches/${id}/results?format=csv`);
    const [notes, rows] = splitNotes(csv.text);
    // The totals of the accepted rows come first, as notes: 3 succeeded NGN payouts.
    expect(notes).toEqual([
      expect.stringMatching(
        /^# NGN requested 3 rows [\d.]+; pending 0 rows 0(\.0+)?; succeeded 3 rows [\d.]+;/,
      ),
    ]);
    expect(rows[0]).toBe("row,reference,idempotency_key,result,upstream_id,upstream_status,error");
    expect(rows[1]).toMatch(/^1,mix-1,mq_[\w-]+,succeeded,txn_\w+,SUCCESSFUL,$/);
    expect(rows).toHaveLength(7);
    const after = await effectKeys("acct_alpha");
    expect(after.length - before.length).toBe(3);

    // The same file again is the same batch: nothing new.
    const again = await h.api("POST", "/v1/batches?kind=payout.bank&allowPartial=true", {
      csv: mixed,
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ batchId: id, created: false });
    expect(await effectKeys("acct_alpha")).toHaveLength(after.length);
  });

  it("reports a reference an earlier batch of the account used as a duplicate, never paying it twice", async () => {
    const first = await h.api("POST", "/v1/batches", {
      body: {
        kind: "payout.momo",
        rows: [
          {
            reference: "m-1",
            amount: 200,
            currency: "KES",
            phoneNumber: "254712345678",
            network: "MPESA",
            iso2: "KE",
          },
        ],
      },
    });
    expect(first.status).toBe(202);
    await finished(first.body.batchId);
    const second = await h.api("POST", "/v1/batches", {
      body: {
        kind: "payout.momo",
        rows: [
          {
            reference: "m-1",
            amount: 300,
            currency: "KES",
            phoneNumber: "254712345678",
            network: "MPESA",
            iso2: "KE",
          },
          {
            reference: "m-2",
            amount: 300,
            currency: "KES",
            phoneNumber: "254712345678",
            network: "MPESA",
            iso2: "KE",
          },
        ],
      },
    });
    expect(second.status).toBe(422);
    expect(second.body.error.rows).toEqual([
      {
        type: "duplicate",
        row: 1,
        reference: "m-1",
        column: "reference",
        rule: `reference already used by batch ${first.body.batchId}`,
      },
    ]);
    // Another account may use the same reference.
    const beta = await h.api("POST", "/v1/batches", {
      token: BETA_TOKEN,
      body: {
        kind: "payout.momo",
        rows: [
          {
            reference: "m-1",
            amount: 200,
            currency: "KES",
            phoneNumber: "254712345678",
            network: "MPESA",
            iso2: "KE",
          },
        ],
      },
    });
    expect(beta.status).toBe(202);
    const badRow = await h.api("POST", "/v1/batches", { body: { kind: "payout.momo", rows: [7] } });
    expect(badRow.status).toBe(422);
    expect(badRow.body.error.rows[0]).toMatchObject({
      row: 1,
      column: "",
      rule: "must be an object",
    });
  });

  it("cancels a batch mid-way: jobs not yet sent end cancelled and never reach the provider", async () => {
    const paused = await h.api("POST", "/v1/accounts/alpha/pause", { body: { reason: "test" } });
    expect(paused.body).toEqual({ alias: "alpha", paused: true });
    const accounts = await h.api("GET", "/v1/accounts");
    expect(accounts.body.accounts[0]).toMatchObject({
      alias: "alpha",
      paused: true,
      pause: { reason: "test" },
    });
    const before = await effectKeys("acct_alpha");
    const res = await h.api("POST", "/v1/batches?kind=payout.bank", { csv: bankCsv("cx", 40) });
    expect(res.status).toBe(202);
    const id = res.body.batchId;
    const foreign = await h.api("POST", `/v1/batches/${id}/cancel`, { token: BETA_TOKEN });
    expect(foreign.status).toBe(404);
    const cancel = await h.api("POST", `/v1/batches/${id}/cancel`);
    expect(cancel.status).toBe(200);
    expect(cancel.body).toMatchObject({ batchId: id, cancelled: 40, inFlight: 0, finished: 0 });
    expect(cancel.body.status).toMatchObject({
      state: "cancelled",
      finished: 40,
      counts: { cancelled: 40 },
    });
    expect(cancel.body.status.finishedAt).toBeDefined();
    const resumed = await h.api("POST", "/v1/accounts/alpha/resume");
    expect(resumed.body).toEqual({ alias: "alpha", paused: false });
    const again = await h.api("POST", `/v1/batches/${id}/cancel`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("batch_not_cancellable");
    // A job enqueued after the resume runs, so workers were free to take the cancelled ones.
    const job = await h.api("POST", "/v1/jobs", { body: bankJob("after-resume") });
    await until(
      () => h.api("GET", `/v1/jobs/${job.body.jobId}`),
      (r) => r.body?.result?.result === "succeeded",
    );
    const lines = (await h.api("GET", `/v1/batches/${id}/results`)).text.trim().split("\n");
    expect(lines.map((l) => JSON.parse(l).result)).toEqual(Array(40).fill("cancelled"));
    expect((await effectKeys("acct_alpha")).length).toBe(before.length + 1);
  });

  it("a job a worker takes after its batch was cancelled ends cancelled, never sent", async () => {
    // A cancel cannot remove a job a worker holds; the check in the rate-gate script stops it.
    // Marking the batch without removing its jobs puts every job in that position.
    await h.api("POST", "/v1/accounts/alpha/pause");
    const before = await effectKeys("acct_alpha");
    const res = await h.api("POST", "/v1/batches?kind=payout.bank", { csv: bankCsv("held", 20) });
    const id = res.body.batchId;
    await h
      .redis()
      .hset(batchKeys(keyspace(h.config().redisPrefix), "alpha", id).meta, "state", "cancelled");
    await h.api("POST", "/v1/accounts/alpha/resume");
    const done = await finished(id);
    expect(done.body).toMatchObject({
      state: "cancelled",
      finished: 20,
      counts: { cancelled: 20, succeeded: 0 },
    });
    expect(await effectKeys("acct_alpha")).toHaveLength(before.length);
  });

  it("keeps each token to its own accounts' batches", async () => {
    const res = await h.api("POST", "/v1/batches?kind=payout.bank", { csv: bankCsv("iso", 2) });
    const id = res.body.batchId;
    for (const [method, path] of [
      ["GET", `/v1/batches/${id}`],
      ["GET", `/v1/batches/${id}/results`],
      ["POST", `/v1/batches/${id}/cancel`],
    ] as const) {
      const r = await h.api(method, path, { token: BETA_TOKEN });
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe("not_found");
    }
    expect((await h.api("GET", `/v1/batches/${id}`, { token: BOTH_TOKEN })).status).toBe(200);
    const both = await h.api("POST", "/v1/batches?kind=payout.bank", {
      token: BOTH_TOKEN,
      csv: bankCsv("iso2", 1),
    });
    expect(both.status).toBe(400);
    expect(both.body.error.details).toEqual([
      { field: "account", rule: "required (this token holds several accounts)" },
    ]);
  });
});

describe("dead letters", () => {
  it("lists a failed job and replays it with the same key", async () => {
    const job = await h.api("POST", "/v1/jobs", {
      body: bankJob("dl-1", { accountNumber: "0000000001" }),
    });
    await until(
      () => h.api("GET", `/v1/jobs/${job.body.jobId}`),
      (r) => r.body?.result?.result === "failed",
    );
    const list = await until(
      () => h.api("GET", "/v1/dead-letters?limit=50"),
      (r) => r.body.deadLetters.some((d: { jobId: string }) => d.jobId === job.body.jobId),
    );
    const letter = list.body.deadLetters.find((d: { jobId: string }) => d.jobId === job.body.jobId);
    expect(letter).toMatchObject({
      idempotencyKey: job.body.idempotencyKey,
      result: { result: "failed", code: "upstream_failed" },
    });
    const replay = await h.api("POST", `/v1/dead-letters/${job.body.jobId}/replay`);
    expect(replay.status).toBe(202);
    const missing = await h.api("POST", `/v1/dead-letters/j_${"0".repeat(40)}/replay`);
    expect(missing.status).toBe(404);
    const bad = await h.api("GET", "/v1/dead-letters?limit=0");
    expect(bad.body.error.details).toEqual([{ field: "query.limit", rule: "must be 1 to 1000" }]);
  });
});

/** A CSV report's note lines (its totals) and its other lines. */
function splitNotes(text: string): [string[], string[]] {
  const lines = text.trim().split("\n");
  return [lines.filter((l) => l.startsWith("#")), lines.filter((l) => !l.startsWith("#"))];
}
