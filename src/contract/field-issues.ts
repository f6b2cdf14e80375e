import type { z } from "zod";

/** One broken rule on one field: `field` is a dotted path ("" for the value itself). */
export interface FieldIssue {
  readonly field: string;
  readonly rule: string;
}

export type Validated<T> =
  | { readonly success: true; readonly data: T }
  | { readonly success: false; readonly issues: readonly FieldIssue[] };

/** Parses `input` with `schema`, reporting failures as field issues that never echo the input. */
export function validate<S extends z.ZodType>(schema: S, input: unknown): Validated<z.output<S>> {
  const result = schema.safeParse(input);
  if (result.success) return { success: true, data: result.data };
  return { success: false, issues: toFieldIssues(result.error.issues, input) };
}

export function toFieldIssues(
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
): readonly FieldIssue[] {
  return issues.flatMap((issue) => {
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({
        field: joinPath([...issue.path, key]),
        rule: "unknown field",
      }));
    }
    return [{ field: joinPath(issue.path), rule: ruleOf(issue, valueAt(input, issue.path)) }];
  });
}

/** "accountNumber: at most 10 characters; amount: required" */
export function formatFieldIssues(issues: readonly FieldIssue[]): string {
  return issues.map((i) => (i.field ? `${i.field}: ${i.rule}` : i.rule)).join("; ");
}

function ruleOf(issue: z.core.$ZodIssue, value: unknown): string {
  // An absent field breaks whatever rule comes first (type, enum, ...); "required" says why.
  if (value === undefined && issue.code !== "custom") return "required";
  switch (issue.code) {
    case "invalid_type":
      // 1e400 reads as Infinity: a number, but not one any amount or count can be.
      if (typeof value === "number" && !Number.isFinite(value)) return "must be a finite number";
      // Query values arrive as text: "abc" for a number is not a number, whatever its type.
      if (typeof value === "string" && issue.expected === "number") return "must be a number";
      if (issue.expected === "int") return "must be a whole number";
      return `must be ${article(issue.expected === "record" ? "object" : issue.expected)}, got ${typeName(value)}`;
    case "too_big":
      return boundRule("at most", issue.origin, issue.maximum, issue.inclusive, issue.exact);
    case "too_small":
      return boundRule("at least", issue.origin, issue.minimum, issue.inclusive, issue.exact);
    case "invalid_format":
      // A schema's own message says the rule in words; zod's default shows the pattern.
      if (issue.message && !issue.message.startsWith("Invalid")) return issue.message;
      return issue.pattern
        ? `must match pattern ${issue.pattern}`
        : `must be a valid ${issue.format}`;
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "not_multiple_of":
      return `must be a multiple of ${issue.divisor}`;
    case "invalid_union":
      // A discriminated union names the values its discriminator accepts.
      if ("options" in issue && issue.options && issue.options.length > 0) {
        return `must be one of ${issue.options.map((v) => JSON.stringify(v)).join(", ")}`;
      }
      return "does not match any allowed form";
    default:
      return issue.message;
  }
}

function boundRule(
  word: "at most" | "at least",
  origin: string,
  bound: number | bigint,
  inclusive: boolean | undefined,
  exact: boolean | undefined,
): string {
  const n = Number(bound);
  switch (origin) {
    case "string":
      return `${exact ? "exactly" : word} ${n} ${n === 1 ? "character" : "characters"}`;
    case "array":
    case "set":
      return `${exact ? "exactly" : word} ${n} ${n === 1 ? "item" : "items"}`;
    default:
      if (inclusive === false) return word === "at most" ? `less than ${n}` : `greater than ${n}`;
      return `${word} ${n}`;
  }
}

function article(expected: string): string {
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number" && Number.isNaN(value)) return "NaN";
  return typeof value;
}

function joinPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = input;
  for (const key of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}
