import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PaymentsError } from "../client/errors.js";
import type { OperationId } from "../contract/operations.js";
import { ANSWER_OPERATIONS, LIST_OPERATIONS, RATE_OPERATIONS } from "../provider/profile.js";
import type { SavedAnswers } from "../provider/suggest-profile.js";
import { CliError } from "./cli-error.js";
import type { Send } from "./provider-check.js";

/** Operations whose answers a folder of saved answers may hold. */
export const SAVED_OPERATIONS: readonly string[] = [
  ...ANSWER_OPERATIONS,
  ...Object.keys(LIST_OPERATIONS),
  ...RATE_OPERATIONS,
];

/** One saved answer: the `data` of a success, or a refusal's message. */
export type SavedAnswer =
  | {
      readonly file: string;
      readonly operation: OperationId;
      readonly data: unknown;
      readonly bare: boolean;
    }
  | {
      readonly file: string;
      readonly operation: OperationId;
      readonly refusal: string;
      readonly code?: string;
    };

const FILE = /^([A-Za-z]+)(\.[A-Za-z0-9_-]+)?\.json$/;
const MAX_FILE_BYTES = 4 * 1024 * 1024;
const MAX_FILES = 1000;

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/** What a saved file holds: the whole answer (the spec's envelope), or its `data` alone. */
function savedAnswerOf(file: string, operation: OperationId, json: unknown): SavedAnswer {
  if (isObject(json) && json.success === true)
    return { file, operation, data: json.data ?? {}, bare: false };
  if (isObject(json) && json.success === false && typeof json.message === "string")
    return {
      file,
      operation,
      refusal: json.message,
      ...(typeof json.code === "string" && { code: json.code }),
    };
  return { file, operation, data: json, bare: true };
}

/**
 * The answers saved in `dir`, one per file named after its operation
 * (`withdrawToBank.json`, `withdrawToBank.failed.json`, `listTransactions.json`): each the whole
 * answer as the provider sent it, or its `data` alone. A file of no operation is refused.
 */
export function readSavedAnswers(dir: string): SavedAnswer[] {
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((n) => n.endsWith(".json"))
      .sort();
  } catch (error) {
    throw new CliError(`--answers: cannot read the folder ${dir} (${(error as Error).message})`);
  }
  if (names.length > MAX_FILES) throw new CliError(`--answers: at most ${MAX_FILES} files`);
  const issues: string[] = [];
  const saved: SavedAnswer[] = [];
  for (const name of names) {
    const operation = FILE.exec(name)?.[1];
    if (operation === undefined || !SAVED_OPERATIONS.includes(operation)) {
      issues.push(
        `--answers: ${name}: not named after an operation (${SAVED_OPERATIONS.join(", ")})`,
      );
      continue;
    }
    const path = join(dir, name);
    try {
      if (statSync(path).size > MAX_FILE_BYTES)
        throw new Error(`larger than ${MAX_FILE_BYTES} bytes`);
      saved.push(
        savedAnswerOf(name, operation as OperationId, JSON.parse(readFileSync(path, "utf8"))),
      );
    } catch (error) {
      issues.push(`--answers: ${name}: not a JSON document (${(error as Error).message})`);
    }
  }
  if (issues.length > 0) throw new CliError(issues.join("\n"));
  if (saved.length === 0) throw new CliError(`--answers: no answer (operation.json) in ${dir}`);
  return saved;
}

/** Saved answers by operation, as the profile's suggestion reads them. */
export function groupSaved(saved: readonly SavedAnswer[]): Map<string, SavedAnswers> {
  const grouped = new Map<
    string,
    { data: unknown[]; refusals: { message: string; code?: string }[] }
  >();
  for (const s of saved) {
    const entry = grouped.get(s.operation) ?? { data: [], refusals: [] };
    if ("refusal" in s)
      entry.refusals.push({ message: s.refusal, ...(s.code && { code: s.code }) });
    else entry.data.push(s.data);
    grouped.set(s.operation, entry);
  }
  return grouped;
}

/**
 * `send`, saving each answer it gets (the API key already redacted by the client) in `dir` as
 * `<operation>.json`, then `<operation>.2.json` and so on: successes whole, refusals as the
 * error envelope the provider sent.
 */
export function savingSend(send: Send, dir: string): Send {
  mkdirSync(dir, { recursive: true });
  const counts = new Map<string, number>();
  const save = (operation: string, body: unknown) => {
    const n = (counts.get(operation) ?? 0) + 1;
    counts.set(operation, n);
    const name = n === 1 ? `${operation}.json` : `${operation}.${n}.json`;
    writeFileSync(join(dir, name), `${JSON.stringify(body, null, 2)}\n`);
  };
  return async (operation, input) => {
    try {
      const answer = await send(operation, input);
      save(operation, { success: true, message: answer.message, data: answer.data });
      return answer;
    } catch (error) {
      if (error instanceof PaymentsError && isObject(error.body) && error.body.success === false)
        save(operation, error.body);
      throw error;
    }
  };
}
