import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { API_ERROR_STATUS } from "../../src/api/error-statuses.js";
import { EXIT } from "../../src/cli/exit-codes.js";
import { ERROR_CODES } from "../../src/errors/error-codes.js";
import { RESULT_CODES } from "../../src/results/result-codes.js";

// docs/errors.md against the code's own lists: each code documented in its section, once, and
// none documented that the code no longer has.
const DOC = readFileSync(new URL("../../docs/errors.md", import.meta.url), "utf8");

/** The first column of each table row of the section headed `heading`. */
function firstColumn(heading: string): string[] {
  const start = DOC.indexOf(`\n## ${heading}\n`);
  expect(start, `docs/errors.md has no section "${heading}"`).toBeGreaterThan(-1);
  const end = DOC.indexOf("\n## ", start + 1);
  const section = DOC.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/^\| (`?[\w]+`?) \|/gm)]
    .map((m) => (m[1] as string).replaceAll("`", ""))
    .filter((cell) => !["Code", "Exit"].includes(cell));
}

const sorted = (codes: Iterable<string | number>) => [...codes].map(String).sort();

describe("docs/errors.md", () => {
  it("lists every API error code once, with the status of the code's table", () => {
    const listed = firstColumn("API error codes");
    expect(sorted(listed)).toEqual(sorted(Object.keys(API_ERROR_STATUS)));
    for (const [code, status] of Object.entries(API_ERROR_STATUS))
      expect(DOC, code).toMatch(new RegExp(`^\\| \`${code}\` \\| ${status}\\b`, "m"));
  });

  it("lists every result code once", () => {
    expect(sorted(firstColumn("Result codes"))).toEqual(sorted(RESULT_CODES));
  });

  it("lists every error code of the library once", () => {
    const codes = Object.values(ERROR_CODES).flat();
    expect(sorted(firstColumn("Error codes of the library"))).toEqual(sorted(new Set(codes)));
  });

  it("lists every CLI exit code once, with its name", () => {
    expect(sorted(firstColumn("CLI exit codes"))).toEqual(sorted(Object.values(EXIT)));
    for (const [name, exit] of Object.entries(EXIT))
      expect(DOC, name).toMatch(new RegExp(`^\\| ${exit} \\| \`${name}\` \\|`, "m"));
  });
});
