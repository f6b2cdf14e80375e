import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");

/** The folders directly under test/ that are not about one folder of src/ (docs/development.md). */
const OWN_FOLDERS = [
  "helpers",
  "fixtures",
  "setup",
  "habits",
  "deploy",
  "browser",
  "cluster",
  "image",
];

function folders(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
}

/** Git keeps no empty folder, so one left behind on disk (after a `git mv`) holds no test. */
function holdsFiles(dir: string): boolean {
  return readdirSync(dir, { withFileTypes: true }).some(
    (entry) => entry.isFile() || (entry.isDirectory() && holdsFiles(join(dir, entry.name))),
  );
}

/** What breaks "test/ mirrors src/": a folder src/ lacks, a test file directly in test/. */
function strays(testDir: string, srcDir: string): string[] {
  const allowed = new Set([...folders(srcDir), ...OWN_FOLDERS]);
  const entries = readdirSync(testDir, { withFileTypes: true });
  return [
    ...entries
      .filter((entry) => entry.isDirectory() && !allowed.has(entry.name))
      .filter((entry) => holdsFiles(join(testDir, entry.name)))
      .map((entry) => `test/${entry.name}/ is not a folder of src/`),
    ...entries
      .filter((entry) => entry.isFile() && entry.name.endsWith(".test.ts"))
      .map((entry) => `test/${entry.name} lies directly in test/`),
  ];
}

const work = mkdtempSync(join(tmpdir(), "moneyq-test-homes-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("test/ mirrors src/", () => {
  it("holds only folders named like a folder of src/, and the shared ones", () => {
    expect(folders(join(root, "src")).length).toBeGreaterThan(10);
    expect(strays(join(root, "test"), join(root, "src"))).toEqual([]);
  });

  it("names a folder src/ does not have and a test file directly in test/, not an empty folder", () => {
    const src = join(work, "src");
    const test = join(work, "test");
    for (const dir of [
      "src/queues",
      "test/queues",
      "test/helpers",
      "test/pipeline",
      "test/empty",
    ]) {
      mkdirSync(join(work, dir), { recursive: true });
    }
    writeFileSync(join(test, "pipeline", "lanes.test.ts"), "");
    writeFileSync(join(test, "config.test.ts"), "");
    writeFileSync(join(test, "README.md"), "");
    expect(strays(test, src)).toEqual([
      "test/pipeline/ is not a folder of src/",
      "test/config.test.ts lies directly in test/",
    ]);
  });
});
