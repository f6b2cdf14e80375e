import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const biome = join(root, "node_modules", ".bin", "biome");
const work = mkdtempSync(join(tmpdir(), "moneyq-layers-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The project's biome.json over a small tree of files, linted as the project's own would be. */
function lint(files: Record<string, string>): string {
  const dir = mkdtempSync(join(work, "tree-"));
  const config = JSON.parse(readFileSync(join(root, "biome.json"), "utf8"));
  config.vcs = { enabled: false };
  writeFileSync(join(dir, "biome.json"), JSON.stringify(config));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  try {
    execFileSync(biome, ["lint", "--max-diagnostics=50", "src"], { cwd: dir, stdio: "pipe" });
    return "";
  } catch (error) {
    const { stdout, stderr } = error as { stdout: Buffer; stderr: Buffer };
    return `${stdout.toString()}${stderr.toString()}`;
  }
}

const exporting = (name: string) => `export const ${name} = 1;\n`;

describe("the layers in biome.json", () => {
  it("let a folder import the folders below it", () => {
    const out = lint({
      "src/redis/keys.ts": exporting("key"),
      "src/queues/producer.ts": `import { key } from "../redis/keys.js";\n\nexport const p = key;\n`,
    });
    expect(out).toBe("");
  });

  it("refuse an import of a folder above, naming the rule", () => {
    const out = lint({
      "src/service/start-service.ts": exporting("start"),
      "src/contract/upward.ts": `import { start } from "../service/start-service.js";\n\nexport const u = start;\n`,
      "src/redis/scripts/upward.ts": `import { start } from "../../service/start-service.js";\n\nexport const v = start;\n`,
    });
    expect(out).toContain("src/contract/ imports only the folders below it");
    expect(out).toContain("src/redis/ imports only the folders below it");
  });

  it("refuse an import cycle", () => {
    const out = lint({
      "src/queues/a.ts": `import { b } from "./b.js";\n\nexport const a = () => b;\n`,
      "src/queues/b.ts": `import { a } from "./a.js";\n\nexport const b = () => a;\n`,
    });
    expect(out).toContain("noImportCycles");
  });

  it("refuse a function whose body is over 100 lines, and take one of 100", () => {
    const fn = (name: string, bodyLines: number) => {
      const sums = Array.from({ length: bodyLines - 2 }, (_, i) => `  total += ${i};\n`);
      return `export function ${name}(): number {\n  let total = 0;\n${sums.join("")}  return total;\n}\n`;
    };
    expect(lint({ "src/queues/short.ts": fn("short", 100) })).toBe("");
    expect(lint({ "src/queues/long.ts": fn("long", 101) })).toContain(
      "This function has too many lines (101). Maximum allowed is 100.",
    );
  });
});
