import { Command, Option } from "commander";
import { BATCH_KIND_NAMES, type BatchKind } from "../batches/batch-kinds.js";
import { renderReport } from "../batches/report-format.js";
import { CliError } from "./cli-error.js";
import { EXIT } from "./exit-codes.js";
import { fileRows } from "./file-rows.js";
import { withOperator } from "./operator.js";
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
}

/** `moneyq batch ...`: submit a batch file, watch it, read its results, cancel it. */
export function batchCommand(): Command {
  const batch = new Command("batch").description("bulk payout batches from CSV or JSON files");

  batch
    .command("submit")
    .description(
      "validate a batch file and enqueue its rows (exit 1 when rows fail, 2 when refused)",
    )
    .argument(
      "<file>",
      "a .csv file with a header row, or a .json array of rows (README: Batch files)",
    )
    .addOption(
      new Option("--kind <kind>", "what every row is")
        .choices(BATCH_KIND_NAMES)
        .makeOptionMandatory(),
    )
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
    .action(
      runAction(async (file: string, flags: SubmitFlags) =>
        withOperator(async (op) => {
          const account = flags.account ?? (op.accounts.length === 1 ? op.accounts[0] : undefined);
          if (account === undefined || !op.accounts.includes(account))
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
          });
          const final =
            flags.wait && !report.dryRun
              ? (await waitForBatches(op.batches, [report.batchId], { quiet: flags.json }))[0]
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

  batch
    .command("status")
    .description("a batch's state, counts per result and progress")
    .argument("<batch-id>")
    .option("--json", "print the status as JSON", false)
    .action(
      runAction(async (batchId: string, flags: { json: boolean }) =>
        withOperator(async (op) => {
          const status = await op.batches.status(batchId);
          process.stdout.write(
            flags.json ? `${JSON.stringify(status)}\n` : `${formatStatus(status)}\n`,
          );
          return EXIT.ok;
        }),
      ),
    );

  batch
    .command("results")
    .description("the batch's results report on stdout, one line per row")
    .argument("<batch-id>")
    .addOption(
      new Option("--format <format>", "report format").choices(["csv", "jsonl"]).default("csv"),
    )
    .action(
      runAction(async (batchId: string, flags: { format: "csv" | "jsonl" }) =>
        withOperator(async (op) => {
          await op.batches.status(batchId);
          for await (const text of renderReport(op.batches.report(batchId), flags.format))
            process.stdout.write(text);
          return EXIT.ok;
        }),
      ),
    );

  batch
    .command("cancel")
    .description("cancel a batch: its jobs not yet sent end `cancelled`")
    .argument("<batch-id>")
    .option("--json", "print the report as JSON", false)
    .action(
      runAction(async (batchId: string, flags: { json: boolean }) =>
        withOperator(async (op) => {
          const report = await op.batches.cancel(batchId);
          process.stdout.write(
            flags.json
              ? `${JSON.stringify(report)}\n`
              : `batch ${batchId} cancelled: ${report.cancelled} jobs removed before sending, ${report.inFlight} in flight (cancelled if not yet sent), ${report.finished} had already finished\n`,
          );
          return EXIT.ok;
        }),
      ),
    );
  return batch;
}
