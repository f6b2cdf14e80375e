import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SCENARIO_FILES } from "./scenarios.js";

const root = join(import.meta.dirname, "..", "..");

// `npm test` leaves these files to `npm run test:scenarios`: a renamed one would run in neither.
describe("the long scenarios' list", () => {
  it("names test files that exist, each once", () => {
    for (const file of SCENARIO_FILES) expect(existsSync(join(root, file)), file).toBe(true);
    expect(new Set(SCENARIO_FILES).size).toBe(SCENARIO_FILES.length);
  });
});
