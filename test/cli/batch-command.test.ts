import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { bankCsv, useService } from "../helpers/service.js";

const h = useService();
let dir = "";
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "moneyq-cli-"));
});

async function file(name: string, content: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

const cli = (args: string[]) => runCli(args, h.env());

// Each CLI run is a new Node process that loads moneyq from source: several seconds apiece on a
// busy machine, so these tests get more time than the suite's default.
describe("moneyq batch", { timeout: 120_000 }, () => {
  const mixed = () =>
    bankCsv("cli-mix", 8, (n, c) => {
      if (n === 3) c.amount = "-5";
      if (n === 6) c.currency = "XYZ";
    });

  it("refuses a file with invalid rows (exit 2), listing each row, column and rule", async () => {
    const path = await file("mixed.csv", mixed());
    const result = await cli([
      "batch",
      "submit",
      path,
      "--kind",
      "payout.bank",
      "--account",
      "alpha",
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("batch refused: 2 of 8 rows are invalid or duplicates");
    expect(result.stderr).toContain("row 3 (cli-mix-3): amount: greater than 0");
    expect(result.stderr).toMatch(/row 6 \(cli-mix-6\): currency: must be one of "NGN"/);
    expect(result.stdout).toBe("");
  });

  it("a dry run with --json prints a report that parses (exit 2 when rows are bad)", async () => {
    const path = await file("mixed-dry.csv", mixed());
    const args = ["batch", "submit", path, "--kind", "payout.bank", "--account", "alpha"];
    const result = await cli([...args, "--dry-run", "--json"]);
    expect(result.code).toBe(2);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ dryRun: true, rows: 8, accepted: 6, invalid: 2 });
    expect(report.issues.map((i: { row: number; column: string }) => [i.row, i.column])).toEqual([
      [3, "amount"],
      [6, "currency"],
    ]);
  });

  it("--allow-partial --wait: progress on stderr, summary on stdout, exit 1 for the rows left out", async () => {
    const path = await file("mixed-partial.csv", mixed());
    const result = await cli([
      "batch",
      "submit",
      path,
      "--kind",
      "payout.bank",
      "--account",
      "alpha",
      "--allow-partial",
      "--wait",
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/100% \| 6\/6 rows \| completed_with_failures/);
    expect(result.stdout).toMatch(/^batch b_[0-9a-f]{32} enqueued\n/);
    expect(result.stdout).toContain("rows 8, accepted 6, invalid 2, duplicates 0");
    expect(result.stdout).toContain("row 3 (cli-mix-3): amount: greater than 0");
    expect(result.stdout).toMatch(/state\s+completed_with_failures/);
    expect(result.stdout).toMatch(/succeeded\s+6/);
  });

  it("a clean file with --wait --json exits 0; status, results and cancel read it back", async () => {
    const path = await file("clean.csv", bankCsv("cli-clean", 5));
    const result = await cli([
      "batch",
      "submit",
      path,
      "--kind",
      "payout.bank",
      "--account",
      "alpha",
      "--wait",
      "--json",
    ]);
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out.status).toMatchObject({ state: "completed", finished: 5, counts: { succeeded: 5 } });
    const id = out.batchId as string;

    const status = await cli(["batch", "status", id, "--json"]);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout).state).toBe("completed");
    const csv = await cli(["batch", "results", id]);
    const csvLines = csv.stdout.trim().split("\n");
    expect(csvLines.filter((l) => l.startsWith("# "))).toHaveLength(1);
    expect(csvLines.filter((l) => !l.startsWith("#"))).toHaveLength(6);
    const jsonl = await cli(["batch", "results", id, "--format", "jsonl"]);
    expect(
      jsonl.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).result),
    ).toEqual(Array(5).fill("succeeded"));
    const cancel = await cli(["batch", "cancel", id]);
    expect(cancel.code).toBe(2);
    expect(cancel.stderr).toContain(`batch ${id} is completed: there is nothing left to cancel`);
    const again = await cli([
      "batch",
      "submit",
      path,
      "--kind",
      "payout.bank",
      "--account",
      "alpha",
    ]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`batch ${id} was submitted before: nothing new enqueued`);
    const unknown = await cli(["batch", "status", "b_nope"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("no batch b_nope");
  });

  it("a dry run names each row that repeats a paid payment of another batch, with its batch and row", async () => {
    const payee = (n: number, c: Record<string, string>) => {
      c.accountNumber = `77000000${n}`;
    };
    const args = ["--kind", "payout.bank", "--account", "alpha"];
    const paid = await cli([
      "batch",
      "submit",
      await file("paid.csv", bankCsv("cli-paid", 3, payee)),
      ...args,
      "--wait",
      "--json",
    ]);
    expect(paid.code).toBe(0);
    const paidId = JSON.parse(paid.stdout).batchId as string;
    const again = bankCsv("cli-again", 4, (n, c) => payee(n === 4 ? 9 : n, c));
    const dry = await cli([
      "batch",
      "submit",
      await file("again.csv", again),
      ...args,
      "--dry-run",
    ]);
    expect(dry.code).toBe(0);
    const day = new Date().toISOString().slice(0, 10);
    expect(dry.stdout).toContain(
      [
        "3 rows repeat a payment of the last 7 days (policy warn: reported, not held):",
        `  row 1 (cli-again-1): paid ${day} in batch ${paidId} row 1`,
        `  row 2 (cli-again-2): paid ${day} in batch ${paidId} row 2`,
        `  row 3 (cli-again-3): paid ${day} in batch ${paidId} row 3`,
      ].join("\n"),
    );
    expect(dry.stdout).not.toContain("row 4 (cli-again-4)");
  });

  it("usage errors exit 2 and every flag has help", async () => {
    const noKind = await cli(["batch", "submit", "x.csv"]);
    expect(noKind.code).toBe(2);
    expect(noKind.stderr).toContain("required option '--kind <kind>' not specified");
    const badKind = await cli(["batch", "submit", "x.csv", "--kind", "payout.cash"]);
    expect(badKind.code).toBe(2);
    expect(badKind.stderr).toContain("Allowed choices are payout.bank, payout.momo");
    const noAccount = await cli(["batch", "submit", "x.csv", "--kind", "payout.bank"]);
    expect(noAccount.code).toBe(2);
    expect(noAccount.stderr).toContain("--account: required (several accounts are configured)");
    const badExtension = await cli([
      "batch",
      "submit",
      "x.txt",
      "--kind",
      "payout.bank",
      "--account",
      "alpha",
    ]);
    expect(badExtension.stderr).toContain("x.txt: the file must end in .csv or .json");
    const help = await cli(["batch", "submit", "--help"]);
    expect(help.code).toBe(0);
    for (const flag of [
      "--kind",
      "--account",
      "--dry-run",
      "--allow-partial",
      "--wait",
      "--json",
      "--batch-id",
    ])
      expect(help.stdout).toContain(flag);
    const top = await cli(["--help"]);
    for (const command of ["start", "batch", "dead-letters", "sandbox", "demo"])
      expect(top.stdout).toContain(command);
  });

  it("dead-letters list and replay", async () => {
    const path = await file(
      "failing.json",
      JSON.stringify([
        {
          reference: "cli-dl-1",
          amount: 10,
          currency: "NGN",
          bankCode: "044",
          accountNumber: "0000000001",
          accountName: "Ada Obi",
          bankName: "Access Bank",
        },
      ]),
    );
    const submitted = await cli([
      "batch",
      "submit",
      path,
      "--kind",
      "payout.bank",
      "--account",
      "alpha",
      "--wait",
      "--json",
    ]);
    expect(submitted.code).toBe(1);
    const status = JSON.parse(submitted.stdout).status;
    expect(status.counts.failed).toBe(1);
    const list = await cli(["dead-letters", "list", "--account", "alpha", "--json"]);
    expect(list.code).toBe(0);
    const letters = list.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const letter = letters.find((l) => l.reference === "cli-dl-1");
    expect(letter.result).toMatchObject({ result: "failed", code: "upstream_failed" });
    const replay = await cli(["dead-letters", "replay", letter.jobId, "--account", "alpha"]);
    expect(replay.code).toBe(0);
    expect(replay.stdout).toBe(`${letter.jobId} replayed\n`);
  });

  it("dead-letters resolve records what the provider did once, with who and the note", async () => {
    const path = await file(
      "declined.json",
      JSON.stringify([
        {
          reference: "cli-resolve-1",
          amount: 10,
          currency: "NGN",
          bankCode: "044",
          accountNumber: "0000000001",
          accountName: "Ada Obi",
          bankName: "Access Bank",
        },
      ]),
    );
    const submitted = await cli([
      "batch",
      "submit",
      path,
      "--kind",
      "payout.bank",
      "--account",
      "alpha",
      "--wait",
      "--json",
    ]);
    expect(JSON.parse(submitted.stdout).status.counts.failed).toBe(1);
    const letters = (await cli(["dead-letters", "list", "--account", "alpha", "--json"])).stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const { jobId } = letters.find((l) => l.reference === "cli-resolve-1");
    const resolve = (...extra: string[]) =>
      cli(["dead-letters", "resolve", jobId, "--account", "alpha", "--result", "failed", ...extra]);
    const missing = await resolve("--as", "ops-cli");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--note");
    const resolved = await resolve(
      "--note",
      "declined, per the provider's statement",
      "--as",
      "ops-cli",
    );
    expect(resolved.code, resolved.stderr).toBe(0);
    expect(resolved.stdout).toBe(`${jobId} resolved failed\n`);
    const again = await resolve("--note", "again", "--as", "ops-cli");
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already_resolved");
    const trail = (await h.api("GET", "/v1/resolutions?account=alpha")).body.resolutions;
    expect(trail.filter((r: { jobId: string }) => r.jobId === jobId)).toEqual([
      expect.objectContaining({
        to: "failed",
        resolver: { by: "operator", name: "ops-cli" },
        note: "declined, per the provider's statement",
      }),
    ]);
  });
});
