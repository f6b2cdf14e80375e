// A 100,000-row bank payout CSV validated and enqueued by moneyq, against csv-parse reading
// the same file (the baseline), each in a fresh child process so peak RSS is the run's own.
// Run: npm run bench -- batch (needs Redis at REDIS_URL, default redis://127.0.0.1:6379).
// Both children are plain node on compiled JavaScript (bench/batch-child.mjs).
import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROWS = 100_000;
const ROUNDS = 5;
const ROOT = join(import.meta.dirname, "..");

// The children run the compiled package: build it from the current sources first.
const build = spawnSync(process.execPath, [join(ROOT, "scripts/build.mjs")], {
  stdio: "inherit",
});
if (build.status !== 0) throw new Error("building dist failed");

const dir = await mkdtemp(join(tmpdir(), "moneyq-bench-"));
const path = join(dir, "payouts.csv");
const lines = ["reference,amount,currency,bankCode,accountNumber,accountName,bankName,narration"];
for (let i = 1; i <= ROWS; i += 1)
  lines.push(
    `pay-${i},${(i % 90_000) + 100}.25,NGN,044,${String(1_000_000_000 + i)},Ada Obi,Access Bank,November payroll`,
  );
await writeFile(path, `${lines.join("\n")}\n`);

interface Run {
  readonly seconds: number;
  readonly rows: number;
  readonly maxRssMb: number;
}
function run(mode: "baseline" | "moneyq"): Run {
  const child = spawnSync(
    process.execPath,
    [join(import.meta.dirname, "batch-child.mjs"), mode, path],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
  );
  if (child.status !== 0) throw new Error(`${mode} run failed`);
  const result = JSON.parse(child.stdout.trim()) as Run;
  if (result.rows !== ROWS) throw new Error(`${mode}: ${result.rows} rows of ${ROWS}`);
  return result;
}

const base: Run[] = [];
const ours: Run[] = [];
for (let round = 0; round < ROUNDS; round += 1) {
  base.push(run("baseline"));
  ours.push(run("moneyq"));
}
await rm(dir, { recursive: true, force: true });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const baseRate = median(base.map((r) => ROWS / r.seconds));
const ourRate = median(ours.map((r) => ROWS / r.seconds));
console.log(
  `batch submission, ${ROWS} rows, medians of ${ROUNDS} alternating rounds, node ${process.version}`,
);
console.log("| run | rows/s: median (range) | peak RSS, MB (max) | ratio to baseline |");
console.log("|---|---|---|---|");
for (const [name, runs, rate] of [
  ["csv-parse alone (baseline)", base, baseRate],
  ["moneyq: validate every row, then enqueue", ours, ourRate],
] as const) {
  const rates = runs.map((r) => ROWS / r.seconds);
  console.log(
    `| ${name} | ${rate.toFixed(0)} (${Math.min(...rates).toFixed(0)}-${Math.max(...rates).toFixed(0)}) | ${Math.max(...runs.map((r) => r.maxRssMb)).toFixed(0)} | ${(rate / baseRate).toFixed(3)} |`,
  );
}
