import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CONFIG_DEFAULTS, KNOWN_VARIABLES } from "../../src/config/load-config.js";

const page = readFileSync(
  join(import.meta.dirname, "..", "..", "docs", "configuration.md"),
  "utf8",
);

/** The "Variables" section alone, so a mention elsewhere on the page does not count as a row. */
const variables = page.split(/^## /m).find((section) => section.startsWith("Variables\n")) ?? "";

describe("docs/configuration.md's table of variables", () => {
  it("lists every variable moneyq reads, with the default the code uses", () => {
    expect(variables, 'a "## Variables" section').not.toBe("");
    for (const name of KNOWN_VARIABLES) {
      const row = variables.split("\n").find((line) => line.startsWith(`| \`${name}\``));
      expect(row, name).toBeDefined();
      const fallback = (CONFIG_DEFAULTS as Record<string, unknown>)[name];
      if (fallback !== undefined) expect(row?.split("|")[2], name).toContain(`\`${fallback}\``);
    }
  });
});
