import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { csvRows } from "../../src/batches/batch-rows.js";
import { Batches } from "../../src/batches/batches.js";
import { runCli } from "../helpers/cli.js";
import { gate, hookedProducer } from "../helpers/hooks.js";
import {
  ALPHA_TOKEN,
  BETA_TOKEN,
  BOTH_TOKEN,
  bankCsv,
  batchFinished,
  useService,
} from "../helpers/service.js";

// Two accounts, alpha and beta, each with its own token: a batch id is the account's own.
const h = useService({ MONEYQ_API_BODY_LIMIT_BYTES: "5000000" });

const submit = (token: string, batchId: string, csv: string) =>
  h.api("POST", `/v1/batches?kind=payout.bank&batchId=${batchId}`, { token, csv });
const status = (token: string, batchId: string) =>
  h.api("GET", `/v1/batches/${batchId}`, { token });
const finished = (token: string, batchId: string) => batchFinished(h, token, batchId);
const references = async (token: string, batchId: string) =>
  (await h.api("GET", `/v1/batches/${batchId}/results?format=jsonl`, { token })).text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line).reference as string);

/** Idempotency keys with a ledger effect at the sandbox for one account. */
async function effectKeys(accountId: string): Promise<string[]> {
  const entries = (await h.sb.control("GET", "/ledger", { query: { accountId } })).body.data
    .entries as { idempotencyKey: string | null }[];
  return [...new Set(entries.flatMap((e) => (e.idempotencyKey ? [e.idempotencyKey] : [])))];
}

describe("batches belong to their account", () => {
  it("another account's batch id cannot be read: the same id is the caller's own batch", async () => {
    const theirs = await submit(BETA_TOKEN, "payroll-read", bankCsv("beta-read", 3));
    expect(theirs.status).toBe(202);
    const mine = await submit(ALPHA_TOKEN, "payroll-read", bankCsv("alpha-read", 1));
    expect(mine.status).toBe(202);
    expect(mine.body).toMatchObject({ created: true, accepted: 1 });
    expect(mine.body.status).toMatchObject({ account: "alpha", rows: 1, accepted: 1 });

    expect((await finished(ALPHA_TOKEN, "payroll-read")).body).toMatchObject({
      account: "alpha",
      rows: 1,
      counts: { succeeded: 1 },
    });
    expect((await finished(BETA_TOKEN, "payroll-read")).body).toMatchObject({
      account: "beta",
      rows: 3,
      counts: { succeeded: 3 },
    });
    expect(await references(ALPHA_TOKEN, "payroll-read")).toEqual(["alpha-read-1"]);
    expect(await references(BETA_TOKEN, "payroll-read")).toEqual([
      "beta-read-1",
      "beta-read-2",
      "beta-read-3",
    ]);
    // A token holding both accounts must say which one it means.
    const both = await status(BOTH_TOKEN, "payroll-read");
    expect(both.status).toBe(400);
    expect(both.body.error.details[0].field).toBe("query.account");
    const named = await h.api("GET", "/v1/batches/payroll-read?account=beta", {
      token: BOTH_TOKEN,
    });
    expect(named.body).toMatchObject({ account: "beta", rows: 3 });
  });

  it("an id taken first by another account does not stop a payroll", async () => {
    const squat = await submit(ALPHA_TOKEN, "payroll-squat", bankCsv("alpha-squat", 1));
    expect(squat.status).toBe(202);
    const before = await effectKeys("acct_beta");
    const payroll = await submit(BETA_TOKEN, "payroll-squat", bankCsv("beta-squat", 4));
    expect(payroll.status).toBe(202);
    expect(payroll.body).toMatchObject({ created: true, accepted: 4 });
    expect(payroll.body.status).toMatchObject({ account: "beta", rows: 4 });
    expect((await finished(BETA_TOKEN, "payroll-squat")).body).toMatchObject({
      account: "beta",
      state: "completed",
      counts: { succeeded: 4 },
    });
    expect((await effectKeys("acct_beta")).length).toBe(before.length + 4);
  });

  it("a batch being validated cannot be read, cancelled or joined by another account", async () => {
    // beta is paused, so none of its jobs runs and its counters stay where validation put them.
    await h.api("POST", "/v1/accounts/beta/pause", { token: BETA_TOKEN });
    const rows = 600;
    // beta's submission is held in `validating`, at its first enqueue, until the checks are done.
    const held = gate();
    const batches = new Batches({
      connection: h.redis(),
      prefix: h.config().redisPrefix,
      producer: hookedProducer(h.service().producer, () => held.wait()),
      results: h.service().results,
    });
    const big = batches.submit({
      account: "beta",
      kind: "payout.bank",
      batchId: "payroll-race",
      source: csvRows(Readable.from([bankCsv("beta-race", rows)]), "payout.bank"),
    });
    await held.entered;
    const validating = await status(BETA_TOKEN, "payroll-race");
    expect(validating.status).toBe(200);
    expect(validating.body.state).toBe("validating");

    for (const [method, path] of [
      ["GET", "/v1/batches/payroll-race"],
      ["GET", "/v1/batches/payroll-race/results"],
      ["POST", "/v1/batches/payroll-race/cancel"],
    ] as const) {
      const r = await h.api(method, path, { token: ALPHA_TOKEN });
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe("not_found");
    }
    const joined = await submit(ALPHA_TOKEN, "payroll-race", bankCsv("alpha-race", 1));
    expect(joined.status).toBe(202);
    expect(joined.body.status).toMatchObject({ account: "alpha", rows: 1 });
    expect((await finished(ALPHA_TOKEN, "payroll-race")).body).toMatchObject({
      account: "alpha",
      counts: { succeeded: 1 },
    });

    held.release();
    const theirs = await big;
    expect(theirs).toMatchObject({ created: true, accepted: rows });
    const after = (await status(BETA_TOKEN, "payroll-race")).body;
    expect(after).toMatchObject({ account: "beta", state: "queued", rows, finished: 0 });
    const lines = await references(BETA_TOKEN, "payroll-race");
    expect(lines).toHaveLength(rows);
    expect(lines.filter((r) => !r.startsWith("beta-race-"))).toEqual([]);
    expect(
      (await h.api("POST", "/v1/batches/payroll-race/cancel", { token: BETA_TOKEN })).status,
    ).toBe(200);
    await h.api("POST", "/v1/accounts/beta/resume", { token: BETA_TOKEN });
  });

  it("of concurrent submissions of one file, exactly one answers created", async () => {
    const csv = bankCsv("same-file", 300);
    const before = await effectKeys("acct_alpha");
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        h.api("POST", "/v1/batches?kind=payout.bank", { token: ALPHA_TOKEN, csv }),
      ),
    );
    expect(answers.map((a) => a.body.created).filter(Boolean)).toHaveLength(1);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 202]);
    const ids = new Set(answers.map((a) => a.body.batchId));
    expect(ids.size).toBe(1);
    // The others waited for the one that enqueued: none answers while it is half done.
    for (const a of answers)
      expect(a.body.status).toMatchObject({
        rows: 300,
        accepted: 300,
        state: expect.not.stringMatching(/^validating$/),
      });
    const done = await finished(ALPHA_TOKEN, [...ids][0] as string);
    expect(done.body).toMatchObject({
      state: "completed",
      rows: 300,
      accepted: 300,
      finished: 300,
      counts: { succeeded: 300 },
    });
    expect((await effectKeys("acct_alpha")).length).toBe(before.length + 300);
  });

  it("the CLI addresses a batch by account when the id is in several", {
    timeout: 120_000,
  }, async () => {
    await submit(ALPHA_TOKEN, "cli-shared", bankCsv("alpha-cli", 1));
    await submit(BETA_TOKEN, "cli-shared", bankCsv("beta-cli", 2));
    await finished(BETA_TOKEN, "cli-shared");
    const cli = (args: string[]) => runCli(["batch", ...args], h.env());

    const ambiguous = await cli(["status", "cli-shared"]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain(
      "--account: required (batch cli-shared exists in alpha, beta)",
    );
    const beta = await cli(["status", "cli-shared", "--account", "beta", "--json"]);
    expect(beta.code).toBe(0);
    expect(JSON.parse(beta.stdout)).toMatchObject({ account: "beta", rows: 2 });
    const report = await cli(["results", "cli-shared", "--account", "alpha", "--format", "jsonl"]);
    expect(
      report.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).reference),
    ).toEqual(["alpha-cli-1"]);
    const unknown = await cli(["cancel", "cli-shared", "--account", "gamma"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--account: no account "gamma" is configured');
  });
});
