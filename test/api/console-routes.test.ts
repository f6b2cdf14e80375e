import { describe, expect, it } from "vitest";
import { consoleAssets } from "../../src/api/console-routes.js";
import { BATCH_STATES } from "../../src/batches/batch-store.js";
import { batchIndexBuiltKey, batchIndexKey, keyspace, rateKeys } from "../../src/redis/keys.js";
import { bankJob } from "../fixtures/batches.js";
import {
  ALPHA_TOKEN,
  BETA_TOKEN,
  BOTH_TOKEN,
  bankCsv,
  batchFinished,
  useService,
} from "../helpers/service.js";

const READER_TOKEN = "tok_alpha_reader_0123456789a";
const SUBMITTER_TOKEN = "tok_alpha_submitter_01234567";

const h = useService({
  MONEYQ_API_TOKENS: JSON.stringify([
    { name: "alpha-ops", token: ALPHA_TOKEN, accounts: ["alpha"] },
    { name: "beta-ops", token: BETA_TOKEN, accounts: ["beta"] },
    { name: "both", token: BOTH_TOKEN, accounts: ["alpha", "beta"] },
    { name: "alpha-reader", token: READER_TOKEN, accounts: ["alpha"], permissions: ["read"] },
    {
      name: "alpha-submitter",
      token: SUBMITTER_TOKEN,
      accounts: ["alpha"],
      permissions: ["submit"],
    },
  ]),
});

const submit = (token: string, batchId: string, csv: string) =>
  h.api("POST", `/v1/batches?kind=payout.bank&batchId=${batchId}`, { token, csv });

describe("what the console reads: the token, the batch list, searches", () => {
  it("GET /v1/me names the token, its accounts and permissions, never the token itself", async () => {
    const me = await h.api("GET", "/v1/me", { token: READER_TOKEN });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ name: "alpha-reader", accounts: ["alpha"], permissions: ["read"] });
    expect(me.text).not.toContain(READER_TOKEN);
    expect((await h.api("GET", "/v1/me", { token: null })).status).toBe(401);
    // The console signs in with /v1/me: a token without read cannot.
    const submitter = await h.api("GET", "/v1/me", { token: SUBMITTER_TOKEN });
    expect(submitter.status).toBe(403);
    expect(submitter.body.error.message).toContain('lacks the "read" permission');
  });

  it("lists the newest batches of the token's accounts, filtered by account and state", async () => {
    expect((await submit(ALPHA_TOKEN, "list-a1", bankCsv("la1", 2))).status).toBe(202);
    expect((await submit(BETA_TOKEN, "list-b1", bankCsv("lb1", 3))).status).toBe(202);
    expect((await submit(ALPHA_TOKEN, "list-a2", bankCsv("la2", 1))).status).toBe(202);
    await batchFinished(h, ALPHA_TOKEN, "list-a1");
    await batchFinished(h, ALPHA_TOKEN, "list-a2");
    await batchFinished(h, BETA_TOKEN, "list-b1");

    const both = await h.api("GET", "/v1/batches", { token: BOTH_TOKEN });
    expect(both.status).toBe(200);
    expect(both.body.batches.map((b: { batchId: string }) => b.batchId)).toEqual([
      "list-a2",
      "list-b1",
      "list-a1",
    ]);
    expect(both.body.batches[1]).toMatchObject({ account: "beta", state: "completed", rows: 3 });
    expect(both.body.batches[1].totals.NGN.requested).toEqual({ rows: 3, amount: "306" });

    const alpha = await h.api("GET", "/v1/batches?account=alpha&limit=1", { token: BOTH_TOKEN });
    expect(alpha.body.batches.map((b: { batchId: string }) => b.batchId)).toEqual(["list-a2"]);
    expect(alpha.body.more).toBe(true);

    // One account's token never sees another's batches.
    const betaOnly = await h.api("GET", "/v1/batches", { token: BETA_TOKEN });
    expect(betaOnly.body.batches.map((b: { batchId: string }) => b.batchId)).toEqual(["list-b1"]);
    expect((await h.api("GET", "/v1/batches?account=alpha", { token: BETA_TOKEN })).status).toBe(
      403,
    );

    const none = await h.api("GET", "/v1/batches?state=running,cancelled", { token: BOTH_TOKEN });
    expect(none.body).toEqual({ batches: [], more: false });
    const done = await h.api("GET", "/v1/batches?state=completed", { token: BOTH_TOKEN });
    expect(done.body.batches).toHaveLength(3);
  });

  it("refuses a bad filter naming the query field and its rule", async () => {
    const bad = await h.api("GET", "/v1/batches?state=done&limit=0", { token: BOTH_TOKEN });
    expect(bad.status).toBe(400);
    const fields = bad.body.error.details.map((d: { field: string }) => d.field).sort();
    expect(fields).toEqual(["query.limit", "query.state"]);
    expect(
      bad.body.error.details.find((d: { field: string }) => d.field === "query.state").rule,
    ).toContain("awaiting_approval");
  });

  it("lists batches written before the index existed, and drops those whose meta is gone", async () => {
    expect((await submit(ALPHA_TOKEN, "pre-index", bankCsv("pre", 1))).status).toBe(202);
    await batchFinished(h, ALPHA_TOKEN, "pre-index");
    const prefix = h.config().redisPrefix;
    // As an earlier release left it: no index at all.
    await h
      .redis()
      .del(batchIndexKey(keyspace(prefix), "alpha"), batchIndexBuiltKey(keyspace(prefix), "alpha"));
    const rebuilt = await h.api("GET", "/v1/batches?account=alpha", { token: ALPHA_TOKEN });
    const ids = rebuilt.body.batches.map((b: { batchId: string }) => b.batchId);
    expect(ids).toEqual(["pre-index", "list-a2", "list-a1"]);

    await h.redis().zadd(batchIndexKey(keyspace(prefix), "alpha"), Date.now(), "vanished");
    const after = await h.api("GET", "/v1/batches?account=alpha", { token: ALPHA_TOKEN });
    expect(after.body.batches.map((b: { batchId: string }) => b.batchId)).toEqual(ids);
    expect(await h.redis().zscore(batchIndexKey(keyspace(prefix), "alpha"), "vanished")).toBeNull();
  });

  it("the report can be limited to rows of given results", async () => {
    const csv = bankCsv("mix", 4, (n, cells) => {
      if (n === 2) cells.amount = "666.66";
    });
    expect((await submit(ALPHA_TOKEN, "mixed", csv)).status).toBe(202);
    await batchFinished(h, ALPHA_TOKEN, "mixed");
    const failed = await h.api(
      "GET",
      "/v1/batches/mixed/results?format=jsonl&result=failed,rejected",
      { token: ALPHA_TOKEN },
    );
    const lines = failed.text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l: { row: number; result: string }) => [l.row, l.result])).toEqual([
      [2, "failed"],
    ]);
    const bad = await h.api("GET", "/v1/batches/mixed/results?result=paid", { token: ALPHA_TOKEN });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].field).toBe("query.result");
  });

  it("dead letters are found by reference and by idempotency key", async () => {
    const key = "console-search-key-0001";
    // 666.66 is the sandbox's magic amount that fails.
    const job = (reference: string, idempotencyKey: string) =>
      bankJob({ reference, idempotencyKey }, { amount: 666.66 });
    const a = await h.api("POST", "/v1/jobs", { token: ALPHA_TOKEN, body: job("dl-ref-1", key) });
    const b = await h.api("POST", "/v1/jobs", {
      token: ALPHA_TOKEN,
      body: job("dl-ref-2", `${key}-b`),
    });
    expect([a.status, b.status]).toEqual([202, 202]);
    const listed = async (query: string) =>
      (await h.api("GET", `/v1/dead-letters?${query}`, { token: ALPHA_TOKEN })).body.deadLetters;
    for (const jobId of [a.body.jobId, b.body.jobId])
      await expect
        .poll(async () => (await listed("")).map((d: { jobId: string }) => d.jobId), {
          timeout: 20_000,
        })
        .toContain(jobId);

    const byRef = await listed("reference=dl-ref-2");
    expect(byRef.map((d: { jobId: string }) => d.jobId)).toEqual([b.body.jobId]);
    const byKey = await listed(`idempotencyKey=${key}`);
    expect(byKey.map((d: { jobId: string }) => d.jobId)).toEqual([a.body.jobId]);
    expect(await listed("reference=no-such-reference")).toEqual([]);
    // Another account's token finds nothing of alpha's.
    const other = await h.api("GET", `/v1/dead-letters?idempotencyKey=${key}`, {
      token: BETA_TOKEN,
    });
    expect(other.body.deadLetters).toEqual([]);
  });

  it("accounts say who paused them and until when a provider's 429 holds them", async () => {
    await h
      .redis()
      .set(rateKeys(keyspace(h.config().redisPrefix), "beta").pause, "1", "PX", 60_000);
    const paused = await h.api("POST", "/v1/accounts/alpha/pause", {
      token: BOTH_TOKEN,
      body: { reason: "bank holiday" },
    });
    expect(paused.status).toBe(200);
    const { accounts } = (await h.api("GET", "/v1/accounts", { token: BOTH_TOKEN })).body;
    const [alpha, beta] = accounts;
    expect(alpha).toMatchObject({
      alias: "alpha",
      paused: true,
      pause: { reason: "bank holiday", cause: "operator" },
    });
    expect(alpha.rateLimitedUntil).toBeUndefined();
    expect(beta.paused).toBe(false);
    const until = Date.parse(beta.rateLimitedUntil);
    expect(until).toBeGreaterThan(Date.now() + 50_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 60_000);
    await h.api("POST", "/v1/accounts/alpha/resume", { token: BOTH_TOKEN });
    await h.redis().del(rateKeys(keyspace(h.config().redisPrefix), "beta").pause);
  });
});

describe("the console's files", () => {
  it("are served without a token, with a policy that lets the page load only its own files", async () => {
    const page = await h.api("GET", "/console", { token: null });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.text).toContain('src="/console/app.js"');
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");

    const script = await h.api("GET", "/console/views/batch.js", { token: null });
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toContain("text/javascript");
    expect((await h.api("GET", "/console/", { token: null })).text).toBe(page.text);
  });

  it("answers 404 for anything else under /console, 405 for another method, and stays out of OpenAPI", async () => {
    for (const path of [
      "/console/nope.js",
      "/console/../package.json",
      "/console/%2e%2e/src/config.ts",
    ]) {
      const answer = await h.api("GET", path, { token: null });
      expect(answer.status, path).toBe(404);
      expect(answer.body.error.code, path).toBe("not_found");
    }
    const post = await h.api("POST", "/console/app.js", { token: null });
    expect(post.status).toBe(405);
    const doc = await h.api("GET", "/openapi.json", { token: null });
    expect(Object.keys(doc.body.paths).filter((p) => p.startsWith("/console"))).toEqual([]);
    expect(doc.body.paths["/v1/me"].get["x-moneyq-permission"]).toBe("read");
  });

  it("are small and all local: nothing refers to another origin", () => {
    const assets = consoleAssets();
    expect([...assets.keys()].sort()).toContain("index.html");
    const bytes = [...assets.values()].reduce((sum, a) => sum + a.body.length, 0);
    // docs/console.md states what the console ships; this keeps it small.
    expect(bytes).toBeLessThan(64 * 1024);
    for (const [path, asset] of assets) {
      const text = asset.body.toString("utf8");
      expect(text, path).not.toMatch(/https?:\/\/|["'(]\/\/[a-z]/i);
      expect(text, path).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
    }
  });

  it("filter batches by exactly the states the API has", () => {
    const view = consoleAssets().get("views/batches.js")?.body.toString("utf8") ?? "";
    const list = /const STATES = \[([^\]]*)\]/.exec(view)?.[1] ?? "";
    expect([...list.matchAll(/"([a-z_]+)"/g)].map((m) => m[1])).toEqual([...BATCH_STATES]);
  });
});
