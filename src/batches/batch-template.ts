import { BATCH_KINDS, type BatchColumn, type BatchKind } from "./batch-kinds.js";
import { csvQuoted } from "./csv-quote.js";

/**
 * A CSV batch file of `kind` to fill in: notes, the header and one example row, the example
 * commented out so that the file as printed pays nothing (the reader refuses it, naming the
 * example's line). Header and example are the columns the reader checks a file against, so the
 * template cannot fall behind them.
 */
export function batchTemplate(kind: BatchKind): string {
  const columns: readonly BatchColumn[] = BATCH_KINDS[kind].columns;
  const listed = (label: string, pick: (c: BatchColumn) => boolean): string[] => {
    const names = columns.filter(pick).map((c) => c.name);
    return names.length === 0 ? [] : [`${label}: ${names.join(", ")}.`];
  };
  const notes = [
    `A moneyq batch file of ${kind} rows; send it with: moneyq batch submit FILE --kind ${kind}`,
    ...listed("Required columns", (c) => c.required),
    ...listed(
      "Optional columns (left empty or out of the header; the provider profile may require some)",
      (c) => !c.required,
    ),
    ...listed(
      "JSON object columns (the cell in quotes, its quotes doubled)",
      (c) => c.type === "json",
    ),
    "reference is unique per row: it keys the row's request, so a file sent twice pays once.",
    "Remove the # of the example row, or write your own rows: below the header a line starting with # refuses the file.",
  ];
  const lines = [
    ...notes.map((note) => `# ${note}`),
    columns.map((c) => c.name).join(","),
    `# ${columns.map((c) => csvQuoted(c.example)).join(",")}`,
  ];
  return `${lines.join("\n")}\n`;
}
