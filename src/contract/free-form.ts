import { z } from "zod";
import { LIMITS } from "./limits.js";

/** Keys that would reach an object's prototype when copied by assignment. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set([
  "__proto__",
  "constructor",
  "prototype",
]);

/** A nesting refusal names the first steps of the path into the value, not all of them. */
export const DEPTH_PATH_SHOWN = 4;

export interface FreeFormProblem {
  /** Where inside the value: keys and indices. */
  readonly path: readonly (string | number)[];
  readonly rule: string;
}

/**
 * The first problem of a free-form JSON value, walked without recursion (a value nested
 * thousands deep must not exhaust the stack that checks it): a forbidden key, nesting deeper
 * than `maxDepth` (the value itself is level 1), or a number that is not finite.
 */
export function freeFormProblem(value: unknown, maxDepth: number): FreeFormProblem | undefined {
  const stack: { value: unknown; path: (string | number)[]; depth: number }[] = [
    { value, path: [], depth: 1 },
  ];
  while (stack.length > 0) {
    const item = stack.pop() as (typeof stack)[number];
    if (typeof item.value === "number" && !Number.isFinite(item.value))
      return { path: item.path, rule: "must be a finite number" };
    if (item.value === null || typeof item.value !== "object") continue;
    if (item.depth > maxDepth)
      return {
        path: item.path.slice(0, DEPTH_PATH_SHOWN),
        rule: `nested deeper than ${maxDepth} levels`,
      };
    if (Array.isArray(item.value)) {
      item.value.forEach((v, i) => {
        stack.push({ value: v, path: [...item.path, i], depth: item.depth + 1 });
      });
      continue;
    }
    for (const key of Object.keys(item.value)) {
      if (FORBIDDEN_KEYS.has(key))
        return { path: [...item.path, key], rule: `the key "${key}" is not allowed` };
      stack.push({
        value: (item.value as Record<string, unknown>)[key],
        path: [...item.path, key],
        depth: item.depth + 1,
      });
    }
  }
  return undefined;
}

/**
 * A free-form JSON object (metadata, buyer payment details) with bounded nesting and size,
 * no prototype keys and only finite numbers. Checked on the input, before the object is
 * copied (a copy would already have lost a `__proto__` key).
 */
export function freeFormObject(
  maxBytes: number = LIMITS.freeFormBytesMax,
  maxDepth: number = LIMITS.freeFormDepthMax,
) {
  return z
    .unknown()
    .superRefine((value, ctx) => {
      const problem = freeFormProblem(value, maxDepth);
      if (problem) {
        ctx.addIssue({ code: "custom", message: problem.rule, path: [...problem.path] });
        return;
      }
      if (
        value !== null &&
        typeof value === "object" &&
        utf8Bytes(JSON.stringify(value)) > maxBytes
      )
        ctx.addIssue({ code: "custom", message: `at most ${maxBytes} bytes as JSON` });
    })
    .pipe(z.record(z.string(), z.unknown()));
}

const encoder = new TextEncoder();

/** Bytes of `text` in UTF-8 (not characters: "é" is 2, an emoji 4); TextEncoder runs anywhere. */
function utf8Bytes(text: string): number {
  return encoder.encode(text).length;
}
