import { describe, expect, it } from "vitest";
import { type OperationSpec, operations, validate } from "../../src/contract/index.js";
import { type LimitCase, limitCases, MISSING } from "../fixtures/limit-cases.js";
import { operationExamples } from "../fixtures/operation-examples.js";

function partOf(x: LimitCase): Record<string, unknown> {
  const example = operationExamples[x.op] as Record<string, Record<string, unknown> | undefined>;
  const base = { ...(example[x.part] ?? {}) };
  // Query values reach a server as text.
  if (x.part === "query") for (const k of Object.keys(base)) base[k] = String(base[k]);
  if (x.value === MISSING) delete base[x.field];
  else base[x.field] = x.value;
  return base;
}

const label = (x: LimitCase) =>
  `${x.op} ${x.part}.${x.field} = ${x.value === MISSING ? "(missing)" : JSON.stringify(x.value)?.slice(0, 24)}`;

describe("contract limits at their boundaries", () => {
  it.each(limitCases.map((x) => [label(x), x] as const))("%s", (_, x) => {
    const op: OperationSpec = operations[x.op];
    const schema = op[x.part];
    if (!schema) throw new Error(`${x.op} has no ${x.part} schema`);
    const result = validate(schema, partOf(x));
    if (x.rule === null) {
      expect(result).toMatchObject({ success: true });
      return;
    }
    expect(result.success).toBe(false);
    const issues = result.success ? [] : result.issues;
    const onField = issues.filter((i) => i.field === x.field);
    expect(onField, JSON.stringify(issues)).not.toHaveLength(0);
    expect(
      onField.some((i) => i.rule.startsWith(x.rule as string)),
      JSON.stringify(onField),
    ).toBe(true);
  });
});
