import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

describe("source rules", () => {
  const files = sourceFiles(join(root, "src")).map((f) => relative(root, f));

  it("reads process.env only in src/config/load-config.ts", () => {
    const offenders = files.filter(
      (f) =>
        f !== "src/config/load-config.ts" &&
        /process\.env/.test(readFileSync(join(root, f), "utf8")),
    );
    expect(files.length).toBeGreaterThan(10);
    expect(offenders).toEqual([]);
  });

  it("keeps the contract free of imports from other parts", () => {
    const offenders = files
      .filter((f) => f.startsWith("src/contract/"))
      .filter((f) => /from "\.\.\//.test(readFileSync(join(root, f), "utf8")));
    expect(offenders).toEqual([]);
  });
});
