// npm run bench [-- NAME]: runs every benchmark, or the one named.
import { spawnSync } from "node:child_process";
import { join } from "node:path";

const all = [
  "sandbox",
  "pipeline",
  "batch",
  "metrics",
  "lanes",
  "tracing",
  "cluster",
  "latency",
  "accounts",
];
const chosen = process.argv[2] ? [process.argv[2]] : all;
for (const name of chosen) {
  if (!all.includes(name)) {
    console.error(`unknown benchmark ${name}; known: ${all.join(", ")}`);
    process.exit(2);
  }
  const result = spawnSync(
    process.execPath,
    ["--import", "tsx", join(import.meta.dirname, `${name}.bench.ts`)],
    {
      stdio: "inherit",
    },
  );
  if (result.status !== 0) process.exit(result.status ?? 1);
}
