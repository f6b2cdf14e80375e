// Variables that hold a JSON list, and the per-account policies such lists configure.
import { z } from "zod";
import { toFieldIssues } from "../contract/field-issues.js";
import type { ConfigIssue, EnvReader } from "./env-reader.js";

/**
 * A variable holding a JSON array of per-account policies: each entry's account configured, and
 * named once; `build` makes the frozen policy of a valid entry.
 */
export function readAccountPolicies<S extends z.ZodType<{ account: string }>, P>(
  read: EnvReader,
  aliases: readonly string[],
  list: { readonly variable: string; readonly schema: S; readonly what: string },
  build: (entry: z.output<S>) => P,
): ReadonlyMap<string, P> {
  const out = new Map<string, P>();
  const { variable, schema, what } = list;
  const listed = read.text(variable);
  if (listed === undefined) return out;
  const entries = readJsonList(listed, variable, schema, what, read.issues);
  entries?.forEach((entry, index) => {
    const where = `${variable}[${index}].account`;
    if (!aliases.includes(entry.account))
      read.issues.push({ variable: where, rule: `no account "${entry.account}" is configured` });
    else if (out.has(entry.account))
      read.issues.push({
        variable: where,
        rule: `account "${entry.account}" has a policy already`,
      });
    out.set(entry.account, build(entry));
  });
  return out;
}

/**
 * A variable holding a non-empty JSON array of `schema` entries ("an array of `what`"). Each
 * broken rule is an issue named by its path under `variable`; undefined when there is any.
 */
export function readJsonList<S extends z.ZodType>(
  listed: string,
  variable: string,
  schema: S,
  what: string,
  issues: ConfigIssue[],
): z.output<S>[] | undefined {
  let json: unknown;
  try {
    json = JSON.parse(listed);
  } catch {
    issues.push({ variable, rule: `must be valid JSON (an array of ${what})` });
    return undefined;
  }
  const parsed = z.array(schema).min(1).safeParse(json);
  if (!parsed.success) {
    for (const i of toFieldIssues(parsed.error.issues, json))
      issues.push({
        variable: `${variable}${i.field.startsWith("[") ? "" : "."}${i.field}`,
        rule: i.rule,
      });
    return undefined;
  }
  return parsed.data;
}
