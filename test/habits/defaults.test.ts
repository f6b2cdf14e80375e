import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

// A default is written once: in its table (the service's CONFIG_DEFAULTS, the client's
// CLIENT_DEFAULTS), and taken from there. This reads each table's entries as written, and
// looks through src for the same value written again on a line about the same thing (one
// that, with the two lines above it, names at least two words of the entry's name, or its one
// word): a default repeated
// elsewhere, which a change to the table would leave behind. Comments, closed lists of choices
// (`as const`) and values shorter than three characters (0 to 99) are not read.
const SRC = new URL("../../src/", import.meta.url);
const TABLES = [
  { file: "config/defaults.ts", name: "CONFIG_DEFAULTS" },
  { file: "client/options.ts", name: "CLIENT_DEFAULTS" },
] as const;
/** Words of a name that say nothing of what it is about. */
const VAGUE = new Set(["moneyq", "ms", "otel", "exporter", "otlp", "per", "second", "max"]);

interface Entry {
  readonly table: string;
  readonly key: string;
  /** The value as the table writes it, when it writes one (not a reference). */
  readonly written: string;
}

/** The entries of a table whose values it writes itself, read from its source. */
function entriesOf(source: string, table: string): Entry[] {
  const start = source.indexOf(`export const ${table} = Object.freeze({`);
  expect(start, `${table} is written as Object.freeze({ ... })`).toBeGreaterThan(-1);
  const body = source.slice(start, source.indexOf("});", start));
  return [...body.matchAll(/^\s+(\w+): (.+?)(?: as \w+)?,$/gm)]
    .map(([, key, written]) => ({ table, key: key as string, written: written as string }))
    .filter((e) => /^("[^"]*"|[\d_ *]{3,})$/.test(e.written));
}

/** The words of a name, as a line about it would spell them. */
function wordsOf(key: string): string[] {
  return key
    .replace(/([a-z])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .split("_")
    .filter((w) => w !== "" && !VAGUE.has(w));
}

function repeats(entry: Entry, files: readonly string[], ownFile: string): string[] {
  const words = wordsOf(entry.key);
  const needed = Math.min(2, words.length);
  const escaped = entry.written.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const value = new RegExp(`(?<![\\w.])${escaped}(?![\\w.])`);
  const found: string[] = [];
  for (const file of files.filter((f) => f !== ownFile)) {
    const lines = readFileSync(new URL(file, SRC), "utf8").split("\n");
    lines.forEach((line, i) => {
      // A comment, or a closed list of the values a variable may take, writes no default.
      if (!value.test(line) || /^\s*(\*|\/\/|\/\*)/.test(line) || /as const;$/.test(line)) return;
      // The line with the two above it: an object's fields are named where it begins.
      const context = lines
        .slice(Math.max(0, i - 2), i + 1)
        .join(" ")
        .toLowerCase();
      if (words.filter((w) => context.includes(w)).length >= needed)
        found.push(`${entry.table}.${entry.key} (${entry.written}) again at src/${file}:${i + 1}`);
    });
  }
  return found;
}

describe("defaults", () => {
  const files = readdirSync(SRC, { recursive: true, encoding: "utf8" }).filter((f) =>
    f.endsWith(".ts"),
  );

  it("are each written once, in their table", () => {
    const found: string[] = [];
    for (const { file, name } of TABLES) {
      const entries = entriesOf(readFileSync(new URL(file, SRC), "utf8"), name);
      expect(entries.length, `${name}'s entries`).toBeGreaterThan(4);
      for (const entry of entries) found.push(...repeats(entry, files, file));
    }
    expect(found).toEqual([]);
  });
});
