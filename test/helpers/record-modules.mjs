// Preloaded with `node --import`: writes every module the process loads to the file named by
// RECORD_MODULES_FILE, one per line: "esm URL" as ES modules are resolved (a hook on the
// loader's thread), then "cjs PATH" for CommonJS modules at exit (require.cache), as Node 20's
// hooks do not see a require() made inside CommonJS.
import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";

const file = process.env.RECORD_MODULES_FILE;
register(new URL("./record-modules-hooks.mjs", import.meta.url), { data: { file } });
const cache = createRequire(import.meta.url).cache;
process.on("exit", () => {
  appendFileSync(
    file,
    Object.keys(cache)
      .map((path) => `cjs ${path}\n`)
      .join(""),
  );
});
