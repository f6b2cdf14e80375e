import { BATCH_KINDS, type BatchColumn, type BatchKind } from "./batch-kinds.js";
import { csvQuoted } from "./csv-quote.js";

/**
 * A CSV batch file of `kind` to fill in: notes, the header and one example row, the example
 * left as a note so that the file as printed holds no row. Header and example are the
 * columns the reader checks a file against, so the template cannot fall behind them.
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
    "Remove the # of the example row or write your own rows: a line starting with # is a note.",
  ];
  const lines = [
    ...notes.map((note) => `# ${note}`),
    columns.map((c) => c.name).join(","),
    `# ${columns.map((c) => csvQuoted(c.example)).join(",")}`,
  ];
  return `${lines.join("\n")}\n`;
}
