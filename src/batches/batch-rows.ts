import { createHash, type Hash } from "node:crypto";
import { type Readable, Transform } from "node:stream";
import { CsvError, parse } from "csv-parse";
import { BatchFileError } from "./batch-errors.js";
import { BATCH_KINDS, type BatchKind } from "./batch-kinds.js";
import { CsvNoteLines } from "./csv-note-lines.js";

/** One row as read: `row` counts from 1, the first row after a CSV header. */
export interface RawRow {
  readonly row: number;
  /** Cell values by column name; undefined when a JSON row is not an object. */
  readonly values: Readonly<Record<string, unknown>> | undefined;
}

/** Rows of a batch file, and the digest of everything read (the batch's identity). */
export interface RowSource {
  readonly rows: AsyncIterable<RawRow>;
  /** Hex SHA-256 of the content; complete once `rows` has been read to the end. */
  digest(): string;
}

/** Names the columns of `header` that `kind` does not know, and the required ones it lacks. */
export function headerProblems(kind: BatchKind, header: readonly string[]): string[] {
  const columns = BATCH_KINDS[kind].columns;
  const known = new Set(columns.map((c) => c.name));
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const name of header) {
    if (!known.has(name))
      problems.push(
        `${name || "(empty)"}: unknown column for ${kind} (known: ${[...known].join(", ")})`,
      );
    else if (seen.has(name)) problems.push(`${name}: column given twice`);
    seen.add(name);
  }
  for (const c of columns)
    if (c.required && !seen.has(c.name)) problems.push(`${c.name}: required column missing`);
  return problems;
}

/**
 * Streams the rows of a CSV file with a header row, notes (lines starting with #) above it left
 * out: memory stays bounded by one row, not the file. A wrong header, a malformed line or a line
 * starting with # below the header stops the read with a BatchFileError.
 */
export function csvRows(input: Readable, kind: BatchKind): RowSource {
  const hash = createHash("sha256").update(`csv\u0000${kind}\u0000`);
  let digest: string | undefined;
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  async function* rows(): AsyncGenerator<RawRow> {
    const parser = parse({
      bom: true,
      trim: true,
      skip_empty_lines: true,
      columns: (header: string[]) => {
        const problems = headerProblems(kind, header);
        if (problems.length > 0) throw new BatchFileError("invalid_header", problems);
        return header;
      },
    });
    // Not csv-parse's `comment`: it would skip a # line below the header too, a row dropped unseen.
    const notes = new CsvNoteLines();
    input.on("error", (error) => parser.destroy(error));
    input.pipe(hashing).pipe(notes).pipe(parser);
    let row = 0;
    try {
      for await (const record of parser as AsyncIterable<Record<string, string>>) {
        row += 1;
        yield { row, values: record };
      }
    } catch (error) {
      // The rest is read and dropped: an HTTP upload must be consumed for its answer to arrive.
      input.unpipe();
      input.resume();
      throw asFileError(error, row + 1);
    }
    if (notes.hashLine !== undefined)
      throw new BatchFileError("commented_line", [
        `line ${notes.hashLine}: starts with # (a note or the template's example row): ` +
          'delete the line or remove the #; write a value that starts with # in quotes ("#1042")',
      ]);
    if (row === 0)
      throw new BatchFileError("empty_batch", ["the file has no rows after the header"]);
    digest = finish(hash);
  }
  return {
    rows: rows(),
    digest: () => {
      if (digest === undefined) throw new Error("csvRows: digest read before the rows");
      return digest;
    },
  };
}

/** Rows given as JSON objects with the same names as the CSV columns. */
export function jsonRows(list: unknown, kind: BatchKind): RowSource {
  if (!Array.isArray(list))
    throw new BatchFileError("invalid_rows", ["rows: must be an array of objects"]);
  const items: readonly unknown[] = list;
  if (items.length === 0) throw new BatchFileError("empty_batch", ["rows: at least 1 row"]);
  const hash = createHash("sha256").update(`json\u0000${kind}\u0000${JSON.stringify(items)}`);
  const digest = finish(hash);
  async function* rows(): AsyncGenerator<RawRow> {
    for (const [index, values] of items.entries()) {
      const row = index + 1;
      if (values === null || typeof values !== "object" || Array.isArray(values)) {
        yield { row, values: undefined };
        continue;
      }
      yield { row, values: values as Record<string, unknown> };
    }
  }
  return { rows: rows(), digest: () => digest };
}

function finish(hash: Hash): string {
  return hash.digest("hex");
}

function asFileError(error: unknown, row: number): Error {
  if (error instanceof BatchFileError) return error;
  // Not by a CSV_ prefix of the code: csv-parse's INVALID_OPENING_QUOTE has none.
  if (error instanceof CsvError) {
    // csv-parse's messages name the line; they never contain more than the parser's view.
    return new BatchFileError("invalid_csv", [`row ${row}: ${error.message}`]);
  }
  return error as Error;
}
