import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dirname, "..", "..");

/**
 * Runs the ES module `script` in a Node process of its own and returns what it printed and
 * every module it loaded, ES modules and CommonJS alike ("esm URL" and "cjs PATH" lines:
 * test/helpers/record-modules.mjs): packages such as commander and BullMQ load as ES modules,
 * which a require cache does not show.
 */
export function runRecordingModules(script: string): { output: string; modules: string[] } {
  const work = mkdtempSync(join(tmpdir(), "moneyq-modules-"));
  try {
    const file = join(work, "modules.txt");
    const output = execFileSync(
      process.execPath,
      [
        "--import",
        join(root, "test/helpers/record-modules.mjs"),
        "--input-type=module",
        "-e",
        script,
      ],
      { cwd: root, encoding: "utf8", env: { ...process.env, RECORD_MODULES_FILE: file } },
    );
    return { output, modules: readFileSync(file, "utf8").split("\n").filter(Boolean) };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The modules of `modules` that lie in package `name`. */
export function ofPackage(modules: readonly string[], name: string): string[] {
  return modules.filter((m) => m.includes(`/node_modules/${name}/`));
}
