import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import { MAX_URGENT_BATCH_ROWS } from "../../src/batches/batches.js";
import { deriveIdempotencyKey, jobIdFor } from "../../src/queues/idempotency-key.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import { runCli } from "../helpers/cli.js";
import { ALPHA_TOKEN, bankCsv, until, useService } from "../helpers/service.js";

// A batch's rows are bulk unless it says `priority=urgent`: a few rows that must not wait
// behind a payroll on the same account. No confirmation lookup during the test: only rows
// compete for the account's 20 slots a second.
const h = useService({
  MONEYQ_RATE_LIMIT_PER_SECOND: "20",
  MONEYQ_CONFIRM_FIRST_DELAY_MS: "600000",
});

/** `moneyq batch submit FILE --kind payout.bank`, with more flags. */
const submitFile = (file: string, flags: readonly string[]) =>
  runCli(["batch", "submit", file, "--kind", "payout.bank", ...flags], h.env());

const submit = (query: string, csv: string) =>
  h.api("POST", `/v1/batches?kind=payout.bank&${query}`, { token: ALPHA_TOKEN, csv });

interface Logged {
  readonly seq: number;
  readonly idempotencyKey?: string;
}
const requests = async (): Promise<Logged[]> =>
  (await h.sb.control("GET", "/requests", { query: { accountId: "acct_alpha" } })).body.data
    .requests as Logged[];

const keysOf = (batchId: string, prefix: string, rows: number) =>
  Array.from({ length: rows }, (_, i) =>
    deriveIdempotencyKey("alpha", batchId, `${prefix}-${i + 1}`),
  );

describe("a batch's priority", () => {
  it("an urgent batch's rows go ahead of a payroll's bulk rows; a bulk batch's wait behind them", async () => {
    expect((await submit("batchId=prio-payroll", bankCsv("payroll", 400))).status).toBe(202);
    await until(
      () => requests(),
      (log) => log.length >= 20,
    );
    const last = (await requests()).at(-1)?.seq ?? 0;
    expect((await submit("batchId=prio-late-bulk", bankCsv("late", 3))).status).toBe(202);
    const urgent = await submit("batchId=prio-urgent&priority=urgent", bankCsv("now", 3));
    expect(urgent.status).toBe(202);

    const urgentKeys = new Set(keysOf("prio-urgent", "now", 3));
    const lateKeys = new Set(keysOf("prio-late-bulk", "late", 3));
    const after = await until(
      async () => (await requests()).filter((r) => r.seq > last),
      (log) => log.filter((r) => urgentKeys.has(r.idempotencyKey ?? "")).length === 3,
    );
    const lastUrgent = after.findLastIndex((r) => urgentKeys.has(r.idempotencyKey ?? ""));
    // Within 3 slots of the later of their submissions: requests already on their way, then them.
    expect(lastUrgent).toBeLessThan(3 + 3);
    // The bulk batch submitted first waits behind the payroll's earlier rows.
    expect(
      after.slice(0, lastUrgent + 1).filter((r) => lateKeys.has(r.idempotencyKey ?? "")),
    ).toEqual([]);
    const status = await h.api("GET", "/v1/batches/prio-payroll", { token: ALPHA_TOKEN });
    expect(status.body.finishedAt, "the payroll was still under way").toBeUndefined();
  });

  it("the CLI's --priority urgent puts the rows in the urgent lane; a priority that is no lane is refused, naming the field", async () => {
    const dir = await mkdtemp(join(tmpdir(), "moneyq-prio-"));
    try {
      const file = join(dir, "rows.csv");
      await writeFile(file, bankCsv("cli", 2));
      const cli = await submitFile(file, [
        "--account",
        "alpha",
        "--batch-id",
        "prio-cli",
        "--priority",
        "urgent",
      ]);
      expect(cli.code, cli.stderr).toBe(0);
      const queue = new Queue(accountQueueName(h.space(), "alpha"), {
        connection: h.redis(),
        prefix: h.space().prefix,
      });
      try {
        const jobs = await Promise.all(
          keysOf("prio-cli", "cli", 2).map((key) => queue.getJob(jobIdFor("alpha", key))),
        );
        expect(jobs.map((j) => j?.data.envelope.priority)).toEqual(["urgent", "urgent"]);
      } finally {
        await queue.close();
      }
      const bad = await submitFile(file, ["--priority", "asap"]);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toMatch(/--priority.*asap.*urgent, bulk/s);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const refused = await submit("batchId=prio-bad&priority=asap", bankCsv("bad", 1));
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([
      expect.objectContaining({ field: "query.priority" }),
    ]);
  });

  it(`an urgent batch of more than ${MAX_URGENT_BATCH_ROWS} rows is refused whole, naming the rule, by the API and the CLI`, async () => {
    const rows = MAX_URGENT_BATCH_ROWS + 1;
    const refused = await submit("batchId=prio-large&priority=urgent", bankCsv("large", rows));
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([
      { field: "priority", rule: expect.stringContaining(`this batch has ${rows}`) },
    ]);
    const none = await h.api("GET", "/v1/batches/prio-large", { token: ALPHA_TOKEN });
    expect(none.status).toBe(404);
    const dir = await mkdtemp(join(tmpdir(), "moneyq-prio-"));
    try {
      const file = join(dir, "rows.csv");
      await writeFile(file, bankCsv("large-cli", rows));
      const cli = await submitFile(file, ["--account", "alpha", "--priority", "urgent"]);
      expect(cli.code).toBe(2);
      expect(cli.stderr).toContain(`priority: urgent: at most ${MAX_URGENT_BATCH_ROWS} rows`);
      expect(cli.stderr).not.toMatch(/\bat \S+ \(/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
