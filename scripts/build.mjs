// `npm run build`: compiles src/ to dist/ (tsconfig.build.json), then copies the Lua scripts
// of src/redis/scripts beside their compiled loader, which reads them from there. The one
// build: npm's `prepare`, the image, the tests' and the benchmarks' rebuilds all run it.
// dist/ is emptied first: a module left from an earlier layout would hide an import of it
// that no longer resolves on a clean checkout.
import { execFileSync } from "node:child_process";
import { cpSync, rmSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
rmSync(join(root, "dist"), { recursive: true, force: true });
execFileSync(
  process.execPath,
  [join(root, "node_modules/typescript/bin/tsc"), "-p", join(root, "tsconfig.build.json")],
  { cwd: root, stdio: "inherit" },
);
cpSync(join(root, "src/redis/scripts"), join(root, "dist/redis/scripts"), {
  recursive: true,
  filter: (path) => !path.endsWith(".ts"),
});
