import { readFile } from "node:fs/promises";
import { Command, Option } from "commander";
import { z } from "zod";
import { BatchAmbiguousError, BatchDecisionError } from "../batches/batch-errors.js";
import { BATCH_KIND_NAMES, type BatchKind } from "../batches/batch-kinds.js";
import { batchTemplate } from "../batches/batch-template.js";
import { renderReport } from "../batches/report-format.js";
import { namedOrOnlyAccount } from "../config/load-config.js";
import { JOB_PRIORITIES, type JobPriority } from "../queues/lanes.js";
import { CliError } from "./cli-error.js";
import { EXIT } from "./exit-codes.js";
import { fileRows } from "./file-rows.js";
import { type Operator, withOperator } from "./operator.js";
import { printValue } from "./print-output.js";
import { runAction } from "./run-action.js";
import { formatStatus, formatSubmit } from "./summary.js";
import { waitForBatches } from "./wait-for-batches.js";

interface SubmitFlags {
  readonly kind: BatchKind;
  readonly account?: string;
  readonly dryRun: boolean;
  readonly allowPartial: boolean;
  readonly wait: boolean;
  readonly json: boolean;
  readonly batchId?: string;
  readonly notBefore?: string;
  readonly priority?: JobPriority;
}

/** `--kind`: mandatory, one of the batch kinds (commander refuses others, listing them). */
const kindOption = () =>
  new Option("--kind <kind>", "what every row is").choices(BATCH_KIND_NAMES).makeOptionMandatory();

const accountOption = () =>
  new Option(
    "--account <alias>",
    "the batch's account (default: the configured account that has a batch of this id)",
  );

/**
 * The account whose batch `batchId` is: the named one, or the one configured account that has
 * a batch of that id (batches belong to their account; the same id may be in several).
 */
async function batchAccount(op: Operator, batchId: string, named?: string): Promise<string> {
  if (named !== undefined) {
    if (!op.accounts.includes(named))
      throw new CliError(
        `--account: no account "${named}" is configured; configured: ${op.accounts.join(", ")}`,
      );
    return named;
  }
  try {
    return await op.batches.accountOf(batchId, op.accounts);
  } catch (error) {
    if (error instanceof BatchAmbiguousError)
      throw new CliError(
        `--account: required (batch ${batchId} exists in ${error.accounts.join(", ")})`,
      );
    throw error;
  }
}

/** `moneyq batch ...`: write a batch file, submit it, watch it, read its results, cancel it. */
export function batchCommand(): Command {
  const batch = new Command("batch").description("bulk payout batches from CSV or JSON files");
  addTemplate(batch);
  addSubmit(batch);
  addStatus(batch);
  addResults(batch);
  addCancel(batch);
  addDecision(batch, "approve");
  addDecision(batch, "reject");
  return batch;
}

function addTemplate(batch: Command): void {
  batch
    .command("template")
    .description(
      "print a CSV batch file to fill in: notes, the header and an example row (commented out)",
    )
    .addOption(kindOption())
    .action((flags: { kind: BatchKind }) => {
      process.stdout.write(batchTemplate(flags.kind));
    });
}

function addSubmit(batch: Command): void {
  batch
    .command("submit")
    .description(
      "validate a batch file and enqueue its rows (exit 1 when rows fail, 2 when refused)",
    )
    .argument(
      "<file>",
      "a .csv file with a header row, or a .json array of rows (README: Batch files)",
    )
    .addOption(kindOption())
    .option(
      "--account <alias>",
      "the account the batch pays from (default: the only one configured)",
    )
    .option("--dry-run", "validate and report only; nothing is enqueued", false)
    .option(
      "--allow-partial",
      "enqueue the valid rows and report the others instead of refusing the batch",
      false,
    )
    .option("--wait", "wait until every row has its result, with a progress bar on stderr", false)
    .option(
      "--json",
      "print the report (and the final status with --wait) as one JSON object",
      false,
    )
    .option("--batch-id <id>", "the batch's id (default: derived from account, kind and content)")
    .option(
      "--not-before <time>",
      "send nothing before this ISO 8601 time with its offset, such as 2026-12-01T09:00:00Z",
    )
    .addOption(
      new Option(
        "--priority <lane>",
        "the lane of its jobs: bulk (the default), or urgent for a few rows that must not wait behind a payroll",
      ).choices(JOB_PRIORITIES),
    )
    .action(
      runAction(async (file: string, flags: SubmitFlags) =>
        withOperator(async (op) => {
          const account = namedOrOnlyAccount(op.accounts, flags.account);
          if (account === undefined)
            throw new CliError(
              `--account: ${flags.account === undefined ? "required (several accounts are configured)" : `no account "${flags.account}" is configured`}; configured: ${op.accounts.join(", ")}`,
            );
          const report = await op.batches.submit({
            account,
            kind: flags.kind,
            source: await fileRows(file, flags.kind),
            dryRun: flags.dryRun,
            allowPartial: flags.allowPartial,
            ...(flags.batchId !== undefined && { batchId: flags.batchId }),
            ...(flags.notBefore !== undefined && { notBefore: notBeforeOf(flags.notBefore) }),
            ...(flags.priority !== undefined && { priority: flags.priority }),
            submittedBy: CLI_SUBMITTER,
          });
          const final =
            flags.wait && !report.dryRun
              ? (
                  await waitForBatches(op.batches, [{ account, batchId: report.batchId }], {
                    quiet: flags.json,
                  })
                )[0]
              : undefined;
          if (flags.json)
            process.stdout.write(
              `${JSON.stringify({ ...report, ...(final && { status: final }) })}\n`,
            );
          else {
            process.stdout.write(`${formatSubmit(report)}\n`);
            if (final) process.stdout.write(`${formatStatus(final)}\n`);
          }
          if (report.dryRun) return report.issues.length > 0 ? EXIT.usage : EXIT.ok;
          if (report.issues.length > 0) return EXIT.failures;
          if (final && final.state !== "completed") return EXIT.failures;
          return EXIT.ok;
        }),
      ),
    );
}

/** `moneyq batch <name> <batch-id> [--account <alias>]`: a command on one batch. */
function batchIdCommand(batch: Command, name: string, description: string): Command {
  return batch
    .command(name)
    .description(description)
    .argument("<batch-id>")
    .addOption(accountOption());
}

/** The action of a batch-id command: `act` runs with an operator and the batch's account. */
function onBatch<F extends { account?: string }>(
  act: (op: Operator, account: string, batchId: string, flags: F) => Promise<number>,
) {
  return runAction(async (batchId: string, flags: F) =>
    withOperator(async (op) =>
      act(op, await batchAccount(op, batchId, flags.account), batchId, flags),
    ),
  );
}

function addStatus(batch: Command): void {
  batchIdCommand(batch, "status", "a batch's state, counts per result and progress")
    .option("--json", "print the status as JSON", false)
    .action(
      onBatch<{ json: boolean; account?: string }>(async (op, account, batchId, flags) => {
        const status = await op.batches.status(account, batchId);
        printValue(status, flags.json, () => formatStatus(status));
        return EXIT.ok;
      }),
    );
}

function addResults(batch: Command): void {
  batchIdCommand(batch, "results", "the batch's results report on stdout, one line per row")
    .addOption(
      new Option("--format <format>", "report format").choices(["csv", "jsonl"]).default("csv"),
    )
    .action(
      onBatch<{ format: "csv" | "jsonl"; account?: string }>(
        async (op, account, batchId, flags) => {
          const { totals } = await op.batches.status(account, batchId);
          const lines = op.batches.report(account, batchId);
          for await (const text of renderReport(lines, flags.format, totals))
            process.stdout.write(text);
          return EXIT.ok;
        },
      ),
    );
}

function addCancel(batch: Command): void {
  batchIdCommand(batch, "cancel", "cancel a batch: its jobs not yet sent end `cancelled`")
    .option("--json", "print the report as JSON", false)
    .action(
      onBatch<{ json: boolean; account?: string }>(async (op, account, batchId, flags) => {
        const report = await op.batches.cancel(account, batchId);
        printValue(
          report,
          flags.json,
          () =>
            `batch ${batchId} cancelled: ${report.cancelled} jobs removed before sending, ${report.inFlight} in flight (cancelled if not yet sent), ${report.finished} had already finished`,
        );
        return EXIT.ok;
      }),
    );
}

/** Who a batch submitted from the command line was submitted by; any approver differs. */
const CLI_SUBMITTER = "cli";

function notBeforeOf(text: string): Date {
  if (!z.iso.datetime({ offset: true }).safeParse(text).success)
    throw new CliError(
      `--not-before: must be an ISO 8601 time with its offset, such as 2026-12-01T09:00:00Z`,
    );
  return new Date(text);
}

/**
 * `moneyq batch approve|reject <batch-id> --token-file <file>`: the approver is the API token in
 * the file, checked as the API checks it (a configured token of the batch's account, holding
 * `approve`, other than the one that submitted the batch).
 */
function addDecision(batch: Command, decision: "approve" | "reject"): void {
  batchIdCommand(
    batch,
    decision,
    decision === "approve"
      ? "approve a batch awaiting approval: its jobs are released"
      : "reject a batch awaiting approval: every job ends `cancelled` (batch_rejected)",
  )
    .requiredOption(
      "--token-file <file>",
      "a file holding the approver's API token (one of MONEYQ_API_TOKENS; - reads stdin)",
    )
    .option("--json", "print the outcome as JSON", false)
    .action(
      onBatch<{ tokenFile: string; json: boolean; account?: string }>(
        async (op, account, batchId, flags) => {
          const approver = await approverOf(op, flags.tokenFile, account);
          try {
            const report =
              decision === "approve"
                ? await op.batches.approve(account, batchId, approver)
                : await op.batches.reject(account, batchId, approver);
            printValue(
              report,
              flags.json,
              () =>
                `batch ${batchId} ${decision === "approve" ? "approved" : "rejected"} by ${approver}: ${report.jobs} jobs ${decision === "approve" ? "released" : "cancelled"}\n${formatStatus(report.status)}`,
            );
            return EXIT.ok;
          } catch (error) {
            if (error instanceof BatchDecisionError) throw new CliError(error.message);
            throw error;
          }
        },
      ),
    );
}

/** The name of the token in `file`, if it is configured for `account` and may approve. */
async function approverOf(op: Operator, file: string, account: string): Promise<string> {
  const text = (file === "-" ? await readStdin() : await readFile(file, "utf8")).trim();
  const token = op.config.api.tokens.find((t) => t.token === text);
  if (token === undefined)
    throw new CliError("--token-file: the file holds no token configured in MONEYQ_API_TOKENS");
  if (!token.accounts.includes(account))
    throw new CliError(`--token-file: token ${token.name} may not use account "${account}"`);
  if (!token.permissions.includes("approve"))
    throw new CliError(`--token-file: token ${token.name} lacks the "approve" permission`);
  return token.name;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
