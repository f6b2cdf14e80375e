import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CONFIG_DEFAULTS, KNOWN_VARIABLES } from "../../src/config.js";

const readme = readFileSync(join(import.meta.dirname, "..", "..", "README.md"), "utf8");

describe("README's configuration table", () => {
  it("lists every variable moneyq reads, with the default the code uses", () => {
    for (const name of KNOWN_VARIABLES) {
      const row = readme.split("\n").find((line) => line.startsWith(`| \`${name}\``));
      expect(row, name).toBeDefined();
      const fallback = (CONFIG_DEFAULTS as Record<string, unknown>)[name];
      if (fallback !== undefined) expect(row?.split("|")[2], name).toContain(`\`${fallback}\``);
    }
  });
});
