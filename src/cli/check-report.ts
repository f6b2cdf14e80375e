import type { OperationCheck } from "../provider/check-answer.js";
import type { JobKind } from "../queues/job-kinds.js";
import { neededEntries } from "./check-plan.js";

/** Where a check's answers came from, for the lines that say what to do about the rest. */
export type CheckSource = "reads" | "submit" | "answers";

/** One account's (or one sandbox environment's, or one folder's) check. */
export interface CheckReport {
  readonly name: string;
  readonly checks: readonly OperationCheck[];
  /** Entries the kinds need that no real answer showed, with why. */
  readonly unverified: readonly string[];
}

const HOW_TO_SEE: Record<CheckSource, (operation: string) => string> = {
  reads: (op) =>
    op.startsWith("get") || op.startsWith("list")
      ? `not read on a real answer of ${op} (see its lines above)`
      : `no real answer of ${op} was read: this check sends no submission; run it with --submit against your provider's sandbox environment, or with --answers DIR`,
  submit: (op) => `no real answer of ${op} was read (see the lines above)`,
  answers: (op) => `no saved answer of ${op} was read: add one as ${op}.json`,
};

/**
 * The entries `kinds` need that no check verified on a real answer of their operation, and that
 * no check already names as unreadable: one line per operation.
 */
export function unverifiedEntries(
  kinds: readonly JobKind[],
  checks: readonly OperationCheck[],
  source: CheckSource,
): string[] {
  const verified = new Set(checks.flatMap((c) => c.verified));
  const named = checks.flatMap((c) => c.problems);
  const lines: string[] = [];
  for (const [operation, entries] of neededEntries(kinds)) {
    const missing = entries.filter(
      (e) => !verified.has(e) && !named.some((p) => p.startsWith(`${e} `)),
    );
    if (missing.length > 0) lines.push(`${missing.join(", ")}: ${HOW_TO_SEE[source](operation)}`);
  }
  return lines;
}

/** How a whole check ended, worst first. */
export type CheckVerdict = "unreadable" | "not_verified" | "ok";

export function verdictOf(reports: readonly CheckReport[]): CheckVerdict {
  const checks = reports.flatMap((r) => r.checks);
  if (checks.some((c) => c.problems.length > 0)) return "unreadable";
  const unverified = reports.some((r) => r.unverified.length > 0);
  if (unverified || checks.some((c) => c.notVerified.length > 0)) return "not_verified";
  return "ok";
}

/** The report as the CLI prints it: one block per operation, then what was not verified. */
export function formatReport(report: CheckReport): string {
  const lines = [report.name];
  for (const c of report.checks) {
    const label = c.problems.length > 0 ? "FAIL" : c.notVerified.length > 0 ? "----" : "ok  ";
    lines.push(`  ${label} ${c.label ?? c.operation}`);
    for (const f of c.found) lines.push(`         found   ${f}`);
    for (const p of c.problems) lines.push(`         cannot read ${p}`);
    for (const n of c.notVerified) lines.push(`         not verified: ${n}`);
    for (const w of c.warnings) lines.push(`         warning ${w}`);
  }
  if (report.unverified.length > 0) {
    lines.push("  ---- entries the pipeline reads that no real answer showed");
    for (const u of report.unverified) lines.push(`         not verified: ${u}`);
  }
  return `${lines.join("\n")}\n`;
}
