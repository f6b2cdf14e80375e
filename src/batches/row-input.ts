import { decimalTextRule } from "../contract/exact-money.js";
import type { FieldIssue } from "../contract/field-issues.js";
import { parseJsonText } from "../contract/json-text.js";
import type { JobInput } from "../queues/job-envelope.js";
import type { RowIssue } from "./batch-errors.js";
import { BATCH_KINDS, type BatchColumn, type BatchKind } from "./batch-kinds.js";
import type { RawRow } from "./batch-rows.js";

const DECIMAL = /^-?\d+(\.\d+)?$/;

export type RowConversion =
  | { readonly ok: true; readonly input: JobInput; readonly reference: string }
  | { readonly ok: false; readonly reference: string | undefined; readonly issues: RowIssue[] };

/**
 * Turns one row into a job input of `kind`: empty cells are left out, number columns must
 * hold a decimal number, JSON columns a JSON object. Contract rules are checked later, on
 * the envelope, and mapped back to columns by `columnOf`.
 */
export function rowInput(
  kind: BatchKind,
  raw: RawRow,
  job: { readonly account: string; readonly batchId: string; readonly idempotencyKey?: string },
): RowConversion {
  const spec = BATCH_KINDS[kind];
  const values = raw.values;
  const ref = typeof values?.reference === "string" ? values.reference : undefined;
  const issue = (column: string, rule: string): RowIssue => ({
    type: "invalid",
    row: raw.row,
    reference: ref,
    column,
    rule,
  });
  if (values === undefined)
    return { ok: false, reference: ref, issues: [issue("", "must be an object")] };
  const issues: RowIssue[] = [];
  const request: Record<string, Record<string, unknown>> = {};
  const known = columnNames(kind);
  for (const name in values)
    if (Object.hasOwn(values, name) && !known.has(name)) issues.push(issue(name, "unknown column"));
  for (const column of spec.columns as readonly BatchColumn[]) {
    const cell = values[column.name];
    if (cell === undefined || cell === null || cell === "") {
      if (column.required) issues.push(issue(column.name, "required"));
      continue;
    }
    if (column.part === "job") continue;
    const converted = convert(column, cell);
    if (!converted.ok) {
      issues.push(issue(column.name, converted.rule));
      continue;
    }
    request[column.part] ??= {};
    (request[column.part] as Record<string, unknown>)[column.name] = converted.value;
  }
  if (ref === undefined && values.reference !== undefined && values.reference !== "")
    issues.push(issue("reference", "must be a string"));
  if (issues.length > 0) return { ok: false, reference: ref, issues };
  const input = {
    kind: spec.jobKind,
    account: job.account,
    batchId: job.batchId,
    ...(job.idempotencyKey !== undefined && { idempotencyKey: job.idempotencyKey }),
    row: raw.row,
    reference: ref as string,
    request,
  } as JobInput;
  return { ok: true, input, reference: ref as string };
}

const namesOf = new Map<BatchKind, ReadonlySet<string>>();

/** The column names of `kind`, built once: a batch asks for every row. */
function columnNames(kind: BatchKind): ReadonlySet<string> {
  let names = namesOf.get(kind);
  if (names === undefined) {
    names = new Set(BATCH_KINDS[kind].columns.map((c) => c.name));
    namesOf.set(kind, names);
  }
  return names;
}

function convert(
  column: BatchColumn,
  cell: unknown,
): { ok: true; value: unknown } | { ok: false; rule: string } {
  if (column.type === "number" && typeof cell === "string") {
    if (!DECIMAL.test(cell))
      return { ok: false, rule: "must be a number (digits, optional decimal point)" };
    // The cell is the amount's decimal form: digits a double would round away are refused.
    const rule = decimalTextRule(cell);
    return rule ? { ok: false, rule } : { ok: true, value: Number(cell) };
  }
  if (column.type === "json" && typeof cell === "string") {
    const parsed = parseJsonText(cell);
    if (parsed.ok) return { ok: true, value: parsed.value };
    const where = parsed.problem.path.join(".");
    return {
      ok: false,
      rule: parsed.problem.rule.startsWith("not valid JSON")
        ? "must be a JSON object"
        : `${where ? `${where}: ` : ""}${parsed.problem.rule}`,
    };
  }
  return { ok: true, value: cell };
}

/** The column a contract issue of an envelope is about: `request.body.amount` is `amount`. */
export function columnOf(issue: FieldIssue): string {
  const match = /^request\.(?:body|params|query)\.([^.[]+)/.exec(issue.field);
  if (match) return match[1] as string;
  return issue.field === "reference" ? "reference" : issue.field;
}
