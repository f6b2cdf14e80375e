import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PARALLEL_FILES } from "./parallel-files.js";
import { SCENARIO_FILES } from "./scenarios.js";

const root = join(import.meta.dirname, "..", "..");

// `npm test` leaves these files to `npm run test:scenarios`: a renamed one would run in neither.
describe("the long scenarios' list", () => {
  it("names test files that exist, each once", () => {
    for (const file of SCENARIO_FILES) expect(existsSync(join(root, file)), file).toBe(true);
    expect(new Set(SCENARIO_FILES).size).toBe(SCENARIO_FILES.length);
  });
});

// A renamed file of `npm test`'s parallel list would only run alone: still run, but slower.
describe("the list of files npm test runs two at a time", () => {
  it("names test files that exist, each once, none a scenario", () => {
    for (const file of PARALLEL_FILES) expect(existsSync(join(root, file)), file).toBe(true);
    expect(new Set(PARALLEL_FILES).size).toBe(PARALLEL_FILES.length);
    const scenarios = new Set<string>(SCENARIO_FILES);
    expect(PARALLEL_FILES.filter((f) => scenarios.has(f))).toEqual([]);
  });
});
