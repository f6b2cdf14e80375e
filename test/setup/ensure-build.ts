import { execFileSync } from "node:child_process";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";

const root = join(import.meta.dirname, "..", "..");

async function newestMtime(dir: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (entry.isFile())
      newest = Math.max(newest, (await stat(join(entry.parentPath, entry.name))).mtimeMs);
  return newest;
}

/**
 * Builds dist/ when a source file changed since the last build. Tests run the CLI and worker
 * processes as users do, from dist/: without a transpiler each process starts in a fraction
 * of the time, which is most of a process test's cost on a slow machine.
 */
export async function ensureBuild(): Promise<void> {
  const built = await stat(join(root, "dist", "index.js")).then(
    (s) => s.mtimeMs,
    () => 0,
  );
  if (built >= (await newestMtime(join(root, "src")))) return;
  console.log("building dist/: a source file is newer than the last build");
  execFileSync(process.execPath, [join(root, "scripts/build.mjs")], {
    cwd: root,
    stdio: "inherit",
  });
}
