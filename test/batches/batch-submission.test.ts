import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { BatchSubmissionBusyError } from "../../src/batches/batch-errors.js";
import type { BatchesOptions } from "../../src/batches/batch-reports.js";
import { csvRows } from "../../src/batches/batch-rows.js";
import { Batches } from "../../src/batches/batches.js";
import type { Producer } from "../../src/queues/producer.js";
import { batchKeys } from "../../src/redis/keys.js";
import { runCli } from "../helpers/cli.js";
import { gate, hookedProducer } from "../helpers/hooks.js";
import { ALPHA_TOKEN, BETA_TOKEN, bankCsv, until, useService } from "../helpers/service.js";

// One submission per batch at a time, and one file per batch id, whatever the timing.
const h = useService();

const submitApi = (token: string, batchId: string, csv: string) =>
  h.api("POST", `/v1/batches?kind=payout.bank&batchId=${batchId}`, { token, csv });
const source = (csv: string) => csvRows(Readable.from([csv]), "payout.bank");
const keysOf = (account: string, batchId: string) => batchKeys(h.space(), account, batchId);

/** The service's producer, with `hook` run before each enqueue of a chunk of rows. */
const hooked = (hook: (call: number) => Promise<void>): Producer =>
  hookedProducer(h.service().producer, (call) => hook(call));

/** Batches on the service's Redis and keys, with its own producer and lease timings. */
function batchesWith(producer: Producer, extra: Partial<BatchesOptions> = {}): Batches {
  return new Batches({
    connection: h.redis(),
    prefix: h.config().redisPrefix,
    producer,
    results: h.service().results,
    ...extra,
  });
}

describe("a batch id holds one file", () => {
  it("another file under a used id is refused with 409 batch_id_reused, by the API and the CLI", async () => {
    const first = await submitApi(ALPHA_TOKEN, "payroll-reuse", bankCsv("reuse-a", 2));
    expect(first.status).toBe(202);
    const other = await submitApi(ALPHA_TOKEN, "payroll-reuse", bankCsv("reuse-b", 3));
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe("batch_id_reused");
    expect(other.body.error.message).toContain("payroll-reuse");
    // The same file again is the same batch: nothing new, nothing mixed.
    const again = await submitApi(ALPHA_TOKEN, "payroll-reuse", bankCsv("reuse-a", 2));
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ created: false });
    const done = await until(
      () => h.api("GET", "/v1/batches/payroll-reuse", { token: ALPHA_TOKEN }),
      (r) => r.body?.finishedAt !== undefined,
    );
    expect(done.body).toMatchObject({ rows: 2, accepted: 2, counts: { succeeded: 2 } });
    const report = await h.api("GET", "/v1/batches/payroll-reuse/results?format=jsonl", {
      token: ALPHA_TOKEN,
    });
    expect(
      report.text
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).reference),
    ).toEqual(["reuse-a-1", "reuse-a-2"]);
    // The same id in another account is another batch, free to hold another file.
    expect((await submitApi(BETA_TOKEN, "payroll-reuse", bankCsv("reuse-b", 3))).status).toBe(202);

    const file = join(tmpdir(), `moneyq-reuse-${process.pid}.csv`);
    await writeFile(file, bankCsv("reuse-c", 1));
    try {
      const cli = await runCli(
        [
          "batch",
          "submit",
          file,
          "--kind",
          "payout.bank",
          "--account",
          "alpha",
          "--batch-id",
          "payroll-reuse",
        ],
        h.env(),
      );
      expect(cli.code, cli.stderr).toBe(2);
      expect(cli.stderr).toContain("batch id payroll-reuse is already used by another file");
    } finally {
      await rm(file, { force: true });
    }
  });

  it("a different file while the first is still being validated is refused too", async () => {
    const held = gate();
    const batches = batchesWith(hooked(() => held.wait()));
    const first = batches.submit({
      account: "alpha",
      kind: "payout.bank",
      batchId: "payroll-mixed",
      source: source(bankCsv("mixed-a", 2)),
    });
    await held.entered;
    const meta = await h.redis().hget(keysOf("alpha", "payroll-mixed").meta, "state");
    expect(meta).toBe("validating");
    const other = await submitApi(ALPHA_TOKEN, "payroll-mixed", bankCsv("mixed-b", 2));
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe("batch_id_reused");
    held.release();
    expect((await first).created).toBe(true);
  });
});

describe("the submission lease", () => {
  it("a submission whose lease was taken away stops, answers no created, and the next one resumes", async () => {
    const rows = 3_000;
    const csv = bankCsv("lapsed", rows);
    const keys = keysOf("alpha", "payroll-lapsed");
    await h.api("POST", "/v1/accounts/alpha/pause", { token: ALPHA_TOKEN });
    try {
      const batches = batchesWith(
        hooked(async (call) => {
          // Another submission takes the batch over while this one is enqueueing.
          if (call === 1) await h.redis().set(keys.submitting, "another-submission");
        }),
      );
      const lost = batches.submit({
        account: "alpha",
        kind: "payout.bank",
        batchId: "payroll-lapsed",
        source: source(csv),
      });
      await expect(lost).rejects.toBeInstanceOf(BatchSubmissionBusyError);
      await expect(lost).rejects.toMatchObject({ code: "submission_under_way" });
      expect(await h.redis().hget(keys.meta, "state")).toBe("validating");
      // It stopped: the rows after the chunks already under way were never written.
      expect(await h.redis().hlen(keys.rows)).toBeLessThan(rows);
      expect(await h.redis().get(keys.submitting)).toBe("another-submission");

      // The other one went away: the next submission of the file resumes the batch.
      await h.redis().del(keys.submitting);
      const resumed = await submitApi(ALPHA_TOKEN, "payroll-lapsed", csv);
      expect(resumed.status).toBe(202);
      expect(resumed.body).toMatchObject({ created: true, rows, accepted: rows });
      expect(resumed.body.status).toMatchObject({ state: "queued", rows, accepted: rows });
      expect(await h.redis().hlen(keys.rows)).toBe(rows);
      const again = await submitApi(ALPHA_TOKEN, "payroll-lapsed", csv);
      expect(again.body).toMatchObject({ created: false });
    } finally {
      await h.api("POST", "/v1/batches/payroll-lapsed/cancel", { token: ALPHA_TOKEN });
      await h.api("POST", "/v1/accounts/alpha/resume", { token: ALPHA_TOKEN });
    }
  });

  it("a submission that stalls longer than its lease keeps it: a second one waits, one answer says created", async () => {
    const leaseMs = 600;
    const keys = keysOf("alpha", "payroll-stall");
    const csv = bankCsv("stall", 5);
    let stalled: () => void = () => undefined;
    const stalling = new Promise<void>((resolve) => {
      stalled = resolve;
    });
    const slow = batchesWith(
      hooked(async (call) => {
        if (call !== 1) return;
        stalled();
        await new Promise((r) => setTimeout(r, leaseMs * 4));
      }),
      { submitLeaseMs: leaseMs },
    );
    const first = slow.submit({
      account: "alpha",
      kind: "payout.bank",
      batchId: "payroll-stall",
      source: source(csv),
    });
    await stalling;
    await new Promise((r) => setTimeout(r, leaseMs * 2));
    // Renewed from the start, on a timer: still held, though no chunk finished.
    expect(await h.redis().get(keys.submitting)).not.toBeNull();
    const second = await batchesWith(h.service().producer, { submitLeaseMs: leaseMs }).submit({
      account: "alpha",
      kind: "payout.bank",
      batchId: "payroll-stall",
      source: source(csv),
    });
    const answers = [await first, second];
    expect(answers.map((a) => a.created)).toEqual([true, false]);
    expect(second.status).toMatchObject({ rows: 5, accepted: 5 });
    expect(second.status?.state).not.toBe("validating");
  });

  it("a submission waits for another one only so long, then answers 409 submission_under_way", async () => {
    const keys = keysOf("alpha", "payroll-busy");
    await h.redis().set(keys.submitting, "another-submission", "PX", 60_000);
    try {
      const batches = batchesWith(h.service().producer, { submitWaitMs: 300 });
      const started = Date.now();
      const waited = batches.submit({
        account: "alpha",
        kind: "payout.bank",
        batchId: "payroll-busy",
        source: source(bankCsv("busy", 1)),
      });
      await expect(waited).rejects.toMatchObject({ code: "submission_under_way" });
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
      expect(await h.redis().exists(keys.meta)).toBe(0);

      const aborted = new AbortController();
      aborted.abort();
      await expect(
        batchesWith(h.service().producer).submit({
          account: "alpha",
          kind: "payout.bank",
          batchId: "payroll-busy",
          source: source(bankCsv("busy", 1)),
          signal: aborted.signal,
        }),
      ).rejects.toMatchObject({ code: "submission_under_way" });
    } finally {
      await h.redis().del(keys.submitting);
    }
  });
});
