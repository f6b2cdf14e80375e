import { readdirSync, readFileSync } from "node:fs";
import { relative } from "node:path";
import { describe, expect, it } from "vitest";
import * as catalogue from "../../src/redis/scripts/lua-scripts.js";
import { parseHeader, type Script } from "../../src/redis/scripts/script.js";

// Each script's header (its Input: KEYS and ARGV, one a line) against its own code and against
// every call of its command in src: a key or an argument added, dropped or moved without its
// header, or a call that passes too few or too many, fails here.
const SCRIPTS: readonly Script[] = Object.values(catalogue);
const SRC = new URL("../../src/", import.meta.url);
const SCRIPT_FOLDER = new URL("../../src/redis/scripts/", import.meta.url);

/** The script's own code, without comments (its includes are checked by luacheck). */
function codeOf(script: Script): string {
  return readFileSync(new URL(script.file, SCRIPT_FOLDER), "utf8")
    .replace(/--\[\[[\s\S]*?\]\]/g, "")
    .replace(/--.*$/gm, "");
}

/** How the code reads KEYS or ARGV: by literal index, and whether also by a computed one. */
function usesOf(code: string, table: "KEYS" | "ARGV") {
  const literal = new Set<number>();
  let computed = false;
  for (const [, index] of code.matchAll(new RegExp(`${table}\\[([^\\]]+)\\]`, "g"))) {
    if (/^\d+$/.test(index as string)) literal.add(Number(index));
    else computed = true;
  }
  if (new RegExp(`#${table}\\b|unpack\\(${table}\\b`).test(code)) computed = true;
  return { literal, computed };
}

interface CallSite {
  readonly where: string;
  readonly args: number;
  readonly spread: boolean;
  /** The values named before the first spread (all of them when none is spread). */
  readonly named: number;
}

/** Every call `x.moneyqName(...)` in src, by command name. */
function callSites(): Map<string, CallSite[]> {
  const sites = new Map<string, CallSite[]>();
  const files = readdirSync(SRC, { recursive: true, encoding: "utf8" }).filter((f) =>
    f.endsWith(".ts"),
  );
  for (const file of files) {
    const path = new URL(file, SRC);
    const text = readFileSync(path, "utf8");
    for (const call of text.matchAll(/\.(moneyq[A-Za-z]+)\(/g)) {
      const name = call[1] as string;
      const line = text.slice(0, call.index).split("\n").length;
      const site = {
        where: `${relative(".", path.pathname)}:${line}`,
        ...argumentsAt(text, call.index + call[0].length),
      };
      sites.set(name, [...(sites.get(name) ?? []), site]);
    }
  }
  return sites;
}

/**
 * The arguments of the call whose list opens before `start`: how many (commas at its own depth,
 * outside strings), and whether one is spread.
 */
function argumentsAt(
  text: string,
  start: number,
): { args: number; spread: boolean; named: number } {
  let depth = 0;
  let args = 0;
  let spread = false;
  let named = -1;
  let empty = true;
  for (let i = start; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '"' || c === "'" || c === "`") {
      i = text.indexOf(c, i + 1);
      empty = false;
      continue;
    }
    if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") {
      if (depth === 0) {
        const total = empty ? 0 : args + 1;
        return { args: total, spread, named: named < 0 ? total : named };
      }
      depth--;
    } else if (depth === 0 && c === ",") {
      // A trailing comma before the closing parenthesis ends no argument.
      if (/^\s*\)/.test(text.slice(i + 1)))
        return { args: args + 1, spread, named: named < 0 ? args + 1 : named };
      args++;
    } else if (depth === 0 && text.startsWith("...", i)) {
      if (!spread) named = args;
      spread = true;
    }
    if (!/\s/.test(c)) empty = false;
  }
  throw new Error(`an unclosed call at ${start}`);
}

describe("each Lua script's header", () => {
  it("covers every script file of the folder", () => {
    const files = readdirSync(SCRIPT_FOLDER).filter((f) => f.endsWith(".lua"));
    expect(SCRIPTS.map((s) => s.file).sort()).toEqual(files.sort());
  });

  it.each(SCRIPTS.map((s) => [s.file, s] as const))(
    "%s names each key and argument its code reads, by index",
    (_file, script) => {
      const header = script.header;
      for (const [table, fixed, perItem] of [
        ["KEYS", header.keys.length, header.keysPerItem],
        ["ARGV", header.args.length, header.argsPerItem],
      ] as const) {
        const { literal, computed } = usesOf(codeOf(script), table);
        const expected = Array.from({ length: fixed }, (_, i) => i + 1);
        expect(
          [...literal].sort((a, b) => a - b),
          `${table} read by number`,
        ).toEqual(expected);
        expect(computed, `${table} read per item`).toBe(perItem);
      }
    },
  );

  it("is what the command's every call in src passes", () => {
    const sites = callSites();
    const mismatches: string[] = [];
    for (const script of SCRIPTS) {
      const calls = sites.get(script.name) ?? [];
      if (calls.length === 0) mismatches.push(`${script.name}: no call in src`);
      const { keys, args, keysPerItem, argsPerItem } = script.header;
      // With keys per item, the caller passes their count first.
      const fixed = keys.length + args.length + (keysPerItem ? 1 : 0);
      for (const call of calls) {
        const exact = !keysPerItem && !argsPerItem;
        // Fixed keys are named at every call, never spread: a stray count or a missing key
        // would otherwise shift them unseen.
        const keysNamed = keysPerItem || call.named >= keys.length;
        const fits = exact
          ? !call.spread && call.args === fixed
          : keysNamed && (call.spread || call.args >= fixed);
        if (!fits)
          mismatches.push(
            `${call.where}: ${script.name} called with ${call.args}${call.spread ? "+" : ""} ` +
              `values; its header takes ${fixed}${exact ? "" : " or more"}`,
          );
      }
    }
    expect(mismatches).toEqual([]);
  });

  it("is refused when it is not as documented", () => {
    expect(() => parseHeader("x.lua", "return 1\n")).toThrow("x.lua: no header");
    const skipped = "--[[\n  X.\n\n  Input:\n    KEYS[2] b\n\n  Output:\n    1\n]]\n";
    expect(() => parseHeader("x.lua", skipped)).toThrow("KEYS[2] is out of order (expected 1)");
  });
});
