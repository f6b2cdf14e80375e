// `npm run lint:lua`: luacheck (Debian's lua-check) over every script of src/redis/scripts as
// Redis runs it, assembled with its includes and constants, so that a name an include or a
// constant should bring is checked too. Each is written, under its own file's name, to a
// folder of its own; luacheck's line numbers are those of the assembled text written there.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as scripts from "../../src/redis/scripts/lua-scripts.js";

const folder = mkdtempSync(join(tmpdir(), "moneyq-lua-"));
const files = Object.values(scripts).map((script) => {
  const path = join(folder, script.file);
  writeFileSync(path, script.lua);
  return path;
});
const config = new URL("../../.luacheckrc", import.meta.url).pathname;
const run = spawnSync("luacheck", ["--config", config, "--codes", "--no-color", ...files], {
  stdio: "inherit",
});
console.log(`assembled scripts: ${folder}`);
process.exit(run.status ?? 1);
