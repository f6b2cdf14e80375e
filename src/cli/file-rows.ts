import { createReadStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import type { BatchKind } from "../batches/batch-kinds.js";
import { csvRows, jsonRows, type RowSource } from "../batches/batch-rows.js";
import { CliError } from "./cli-error.js";

/** Rows of a .csv file (streamed) or a .json file (an array of rows, or { rows: [...] }). */
export async function fileRows(path: string, kind: BatchKind): Promise<RowSource> {
  const extension = extname(path).toLowerCase();
  if (extension === ".csv") {
    const stream = createReadStream(path);
    await new Promise<void>((resolve, reject) => {
      stream.once("open", () => resolve());
      stream.once("error", (error) =>
        reject(new CliError(`cannot read ${path}: ${error.message}`)),
      );
    });
    return csvRows(stream, kind);
  }
  if (extension === ".json") {
    let json: unknown;
    try {
      json = JSON.parse(await readFile(path, "utf8"));
    } catch (error) {
      throw new CliError(`cannot read ${path} as JSON: ${(error as Error).message}`);
    }
    const rows = Array.isArray(json) ? json : (json as { rows?: unknown } | null)?.rows;
    return jsonRows(rows, kind);
  }
  throw new CliError(`${path}: the file must end in .csv or .json`);
}
