import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { BatchFileError } from "../../src/batches/batch-errors.js";
import { csvRows, type RawRow } from "../../src/batches/batch-rows.js";

const HEADER = "reference,amount,currency,bankCode,accountNumber,accountName,bankName";
const row = (reference: string) => `${reference},10,NGN,044,0123456789,Ada Obi,Access Bank`;

async function read(csv: string): Promise<RawRow[]> {
  const rows: RawRow[] = [];
  for await (const raw of csvRows(Readable.from([csv]), "payout.bank").rows) rows.push(raw);
  return rows;
}

describe("csvRows: lines starting with #", () => {
  it("are notes: skipped before the header and between rows, never counted as rows", async () => {
    const rows = await read(
      ["# payroll of November", HEADER, row("a-1"), `# ${row("a-2")}`, row("a-3"), "#"].join("\n"),
    );
    expect(rows.map((r) => [r.row, r.values?.reference])).toEqual([
      [1, "a-1"],
      [2, "a-3"],
    ]);
  });

  it("only at the start of a line: a # in a later cell, or in a quoted first cell, is text", async () => {
    const rows = await read(
      [HEADER, `"#7",10,NGN,044,0123456789,Ada Obi,Access Bank #2`, row("b-2")].join("\n"),
    );
    expect(rows.map((r) => [r.values?.reference, r.values?.bankName])).toEqual([
      ["#7", "Access Bank #2"],
      ["b-2", "Access Bank"],
    ]);
  });

  it("a file of notes after its header has no rows: refused as empty, saying why", async () => {
    const refused = await read([HEADER, `# ${row("c-1")}`].join("\n")).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BatchFileError);
    expect(refused).toMatchObject({ code: "empty_batch" });
    expect((refused as BatchFileError).problems[0]).toContain("lines starting with # are notes");
  });
});
