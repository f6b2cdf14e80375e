import { readFileSync } from "node:fs";
import type { RedisConnection } from "../connection.js";
import { LUA_CONSTANTS, type LuaConstant } from "./lua-constants.js";

/**
 * A Lua script of this folder, run as the defined command `name`. Its file is headed by its
 * `Input:` (one `KEYS[n]` or `ARGV[n]` a line; an index that is not a number, such as
 * `KEYS[3 + 2(i - 1)]` or `ARGV[7...]`, stands for keys or arguments given per item) and its
 * `Output:`. Without per-item keys, the header's count of keys is the command's: the caller
 * passes keys and arguments alone; with them, the caller passes the count first.
 */
export interface Script {
  readonly name: string;
  readonly file: string;
  /** The text Redis runs: the file with its includes and the constants it names. */
  readonly lua: string;
  readonly header: LuaHeader;
  /** Undefined when the caller passes the count (the script takes keys per item). */
  readonly numberOfKeys: number | undefined;
}

/** The `Input:` of a script's header. */
export interface LuaHeader {
  /** The fixed keys, `KEYS[1]` first, by what each is. */
  readonly keys: readonly string[];
  readonly args: readonly string[];
  /** Whether further keys (arguments) follow per item. */
  readonly keysPerItem: boolean;
  readonly argsPerItem: boolean;
}

const SCRIPT_FOLDER = new URL("./", import.meta.url);
const INCLUDE = /^--- @include "([a-z-]+)"$/gm;

/** The script in `file` of this folder, read (and assembled) when first used, not on import. */
export function luaScript(name: string, file: string): Script {
  let text: string | undefined;
  let header: LuaHeader | undefined;
  const source = () => {
    text ??= readFileSync(new URL(file, SCRIPT_FOLDER), "utf8");
    return text;
  };
  const parsed = () => {
    header ??= parseHeader(file, source());
    return header;
  };
  let lua: string | undefined;
  return {
    name,
    file,
    get lua() {
      lua ??= assemble(source());
      return lua;
    },
    get header() {
      return parsed();
    },
    get numberOfKeys() {
      const h = parsed();
      return h.keysPerItem ? undefined : h.keys.length;
    },
  };
}

/**
 * The text Redis runs: each `--- @include "name"` line replaced by `includes/name.lua` (once a
 * script, however often asked for), after a `local` line for each constant of LUA_CONSTANTS
 * the code names.
 */
export function assemble(source: string): string {
  const seen = new Set<string>();
  const expand = (text: string): string =>
    text.replace(INCLUDE, (_line, name: string) => {
      if (seen.has(name)) return "";
      seen.add(name);
      return expand(readFileSync(new URL(`includes/${name}.lua`, SCRIPT_FOLDER), "utf8")).trimEnd();
    });
  const code = expand(source);
  const named = withoutComments(code);
  const constants = Object.entries(LUA_CONSTANTS)
    .filter(([constant]) => new RegExp(`\\b${constant}\\b`).test(named))
    .map(([constant, value]) => `local ${constant} = ${luaValue(value)}\n`)
    .join("");
  return constants + code;
}

function withoutComments(code: string): string {
  return code.replace(/--\[\[[\s\S]*?\]\]/g, "").replace(/--.*$/gm, "");
}

function luaValue(value: LuaConstant): string {
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return luaString(value);
  const fields = Array.isArray(value)
    ? value.map((v) => `[${luaString(v)}] = true`)
    : Object.entries(value).map(([k, v]) => `${k} = ${typeof v === "string" ? luaString(v) : v}`);
  return `{\n${fields.map((f) => `  ${f},\n`).join("")}}`;
}

function luaString(text: string): string {
  if (!/^[\w.:-]*$/.test(text))
    throw new Error(`a Lua constant may not hold ${JSON.stringify(text)}`);
  return `'${text}'`;
}

const ENTRY = /^\s{4}(KEYS|ARGV)\[([^\]]+)\]\s+\S/;

/** A script's `Input:`, read from its header; throws when the header is not as documented. */
export function parseHeader(file: string, source: string): LuaHeader {
  const block = /^--\[\[\n([\s\S]*?)\n\]\]/.exec(source)?.[1];
  const input = block && /\n {2}Input:\n([\s\S]*?)\n {2}Output:\n {4}\S/.exec(block)?.[1];
  if (!input) throw new Error(`${file}: no header with Input: and Output:`);
  const keys: string[] = [];
  const args: string[] = [];
  let keysPerItem = false;
  let argsPerItem = false;
  for (const line of input.split("\n")) {
    const entry = ENTRY.exec(line);
    if (!entry) continue;
    const [, kind, index] = entry as unknown as [string, "KEYS" | "ARGV", string];
    const list = kind === "KEYS" ? keys : args;
    if (!/^\d+$/.test(index)) {
      if (kind === "KEYS") keysPerItem = true;
      else argsPerItem = true;
      continue;
    }
    if (Number(index) !== list.length + 1)
      throw new Error(`${file}: ${kind}[${index}] is out of order (expected ${list.length + 1})`);
    list.push(line.trim());
  }
  return { keys, args, keysPerItem, argsPerItem };
}

/**
 * Defines each script on the connection, once. A defined command runs by SHA: the script's text
 * is not sent with every call.
 */
export function defineScripts(redis: RedisConnection, ...scripts: readonly Script[]): void {
  for (const { name, numberOfKeys, lua } of scripts) {
    if (name in redis) continue;
    redis.defineCommand(name, numberOfKeys === undefined ? { lua } : { numberOfKeys, lua });
  }
}
