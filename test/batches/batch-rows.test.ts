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

/** What `read` throws for `csv`, or a failure when it reads it. */
async function refusal(csv: string): Promise<BatchFileError> {
  const refused = await read(csv).then(
    (rows) => new Error(`read ${rows.length} rows`),
    (e: unknown) => e,
  );
  expect(refused).toBeInstanceOf(BatchFileError);
  return refused as BatchFileError;
}

const HASH_LINE = (line: number) =>
  `line ${line}: starts with # (a note or the template's example row): delete the line or ` +
  'remove the #; write a value that starts with # in quotes ("#1042")';

describe("csvRows: lines starting with #", () => {
  it("above the header are notes: skipped, even with quotes, BOM, CRLF or leading spaces", async () => {
    for (const eol of ["\n", "\r\n", "\r"]) {
      const csv = ["\uFEFF# payroll of November", '  # "quoted, unclosed', "", HEADER, row("a-1")];
      const rows = await read([...csv, row("a-2")].join(eol));
      expect(
        rows.map((r) => [r.row, r.values?.reference]),
        JSON.stringify(eol),
      ).toEqual([
        [1, "a-1"],
        [2, "a-2"],
      ]);
    }
  });

  it("leave the file's line numbers as they are: a later line is named by its line in the file", async () => {
    for (const eol of ["\n", "\r\n", "\r"]) {
      const notes = ["\uFEFF# one", "# two", "", HEADER, row("a-1")];
      const short = await refusal([...notes, "a-2,10,NGN", ""].join(eol));
      expect(short).toMatchObject({ code: "invalid_csv" });
      expect(short.problems[0], JSON.stringify(eol)).toContain("on line 6");
      const hashed = await refusal([...notes, row("#a-2"), ""].join(eol));
      expect(hashed.problems, JSON.stringify(eol)).toEqual([HASH_LINE(6)]);
    }
  });

  it("below the header refuse the file, naming the line: a row starting #1042 is never dropped", async () => {
    const refused = await refusal(
      ["# notes", HEADER, row("a-1"), row("#1042"), row("a-3")].join("\n"),
    );
    expect(refused).toMatchObject({ code: "commented_line", problems: [HASH_LINE(4)] });
    // A note, one with leading spaces or quotes, or a lone #: the same, the first one named.
    for (const line of ["# a note", '  # a "quoted" note', "#"]) {
      const csv = [HEADER, row("a-1"), "", line, `# ${row("a-2")}`].join("\n");
      expect((await refusal(csv)).problems, line).toEqual([HASH_LINE(4)]);
    }
    // The last line too, without a line break; or right below the header, before any row.
    expect((await refusal([HEADER, row("a-1"), "#x"].join("\n"))).problems).toEqual([HASH_LINE(3)]);
    expect((await refusal([HEADER, `# ${row("a-1")}`].join("\n"))).problems).toEqual([
      HASH_LINE(2),
    ]);
  });

  it("in any chunks of the stream: a BOM, a CRLF, a note or a # line split across reads", async () => {
    const csv = ["\uFEFF# a note", HEADER, row("a-1"), row("#1042"), ""].join("\r\n");
    const bytes = Buffer.from(csv);
    for (let at = 1; at < bytes.length; at += 1) {
      const chunks = [bytes.subarray(0, at), bytes.subarray(at)];
      const rows: RawRow[] = [];
      const refused = await (async () => {
        for await (const raw of csvRows(Readable.from(chunks), "payout.bank").rows) rows.push(raw);
      })().catch((e: unknown) => e);
      expect(refused, `split at ${at}`).toMatchObject({ problems: [HASH_LINE(4)] });
      expect(rows.map((r) => r.values?.reference)).toEqual(["a-1"]);
    }
  });

  it("only at the start of a line: a # in a later cell, a quoted first cell or a quoted line break is text", async () => {
    const rows = await read(
      [
        HEADER,
        `"#7",10,NGN,044,0123456789,Ada Obi,Access Bank #2`,
        ` "#8",10,NGN,044,0123456789,"Ada\n#Obi",Access Bank`,
        row("b-3"),
      ].join("\n"),
    );
    expect(
      rows.map((r) => [r.values?.reference, r.values?.accountName, r.values?.bankName]),
    ).toEqual([
      ["#7", "Ada Obi", "Access Bank #2"],
      ["#8", "Ada\n#Obi", "Access Bank"],
      ["b-3", "Ada Obi", "Access Bank"],
    ]);
  });

  it("a problem above the # line is named first", async () => {
    const refused = await refusal([HEADER, "a-1,10,NGN", row("#1042")].join("\n"));
    expect(refused).toMatchObject({ code: "invalid_csv" });
    expect(refused.problems[0]).toContain("on line 2");
  });

  it("a quote inside a cell that is not quoted is malformed CSV, named by its line", async () => {
    const refused = await refusal(
      ["# a note", HEADER, row("a-1"), `a-2,10,NGN,044,1,Ada "Obi",B`].join("\n"),
    );
    expect(refused).toMatchObject({ code: "invalid_csv" });
    expect(refused.problems[0]).toMatch(/Invalid Opening Quote: .* at line 4/);
  });

  it("a file of notes and a header has no rows: refused as empty", async () => {
    expect(await refusal(["# a note", HEADER, ""].join("\n"))).toMatchObject({
      code: "empty_batch",
      problems: ["the file has no rows after the header"],
    });
  });
});
