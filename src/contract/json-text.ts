import { decimalTextRule } from "./exact-money.js";
import { DEPTH_PATH_SHOWN, type FreeFormProblem, freeFormProblem } from "./free-form.js";

/** How deep any JSON body may nest: far beyond every schema, far below any stack limit. */
export const JSON_BODY_DEPTH_MAX = 64;

export type ParsedJson =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly problem: FreeFormProblem };

/**
 * Parses a JSON request body without trusting it: nesting is measured on the text before
 * parsing (so no later step recurses into a bomb), a number with more digits than a double
 * holds is refused instead of rounded, and the parsed value may hold no prototype key and no
 * number that is not finite (1e400). Empty text is no body (undefined).
 */
export function parseJsonText(text: string, maxDepth = JSON_BODY_DEPTH_MAX): ParsedJson {
  if (text.trim() === "") return { ok: true, value: undefined };
  const scanned = scanText(text, maxDepth);
  if (scanned) return { ok: false, problem: scanned };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      problem: { path: [], rule: `not valid JSON: ${(error as Error).message}` },
    };
  }
  const problem = freeFormProblem(value, maxDepth + 1);
  return problem ? { ok: false, problem } : { ok: true, value };
}

const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * One pass over the text: nesting depth and number literals, with the path of keys and
 * indices to where the text is (so that a refusal names the field). Malformed text is left
 * to JSON.parse.
 */
function scanText(text: string, maxDepth: number): FreeFormProblem | undefined {
  const path: (string | number)[] = [];
  let lastString = "";
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const start = i;
      for (i += 1; i < text.length && text.charCodeAt(i) !== 0x22; i += 1)
        if (text.charCodeAt(i) === 0x5c) i += 1;
      lastString = text.slice(start, i + 1);
    } else if (c === 0x3a) {
      path[path.length - 1] = keyOf(lastString);
    } else if (c === 0x2c) {
      const top = path[path.length - 1];
      if (typeof top === "number") path[path.length - 1] = top + 1;
    } else if (c === 0x5b || c === 0x7b) {
      if (path.length >= maxDepth)
        return {
          path: path.slice(0, DEPTH_PATH_SHOWN),
          rule: `nested deeper than ${maxDepth} levels`,
        };
      path.push(c === 0x5b ? 0 : "");
    } else if (c === 0x5d || c === 0x7d) path.pop();
    else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      NUMBER.lastIndex = i;
      const match = NUMBER.exec(text);
      if (!match) continue;
      const rule = decimalTextRule(match[0]);
      if (rule) return { path: [...path], rule: `${rule}: ${match[0].slice(0, 40)}` };
      i += match[0].length - 1;
    }
  }
  return undefined;
}

function keyOf(quoted: string): string {
  try {
    return String(JSON.parse(quoted));
  } catch {
    return quoted;
  }
}
