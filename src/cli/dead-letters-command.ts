import { Command, Option } from "commander";
import { namedOrOnlyAccount } from "../config/load-config.js";
import { ResolutionError } from "../queues/job-resolutions.js";
import { CliError } from "./cli-error.js";
import { EXIT } from "./exit-codes.js";
import { intOption } from "./int-option.js";
import { type Operator, withOperator } from "./operator.js";
import { printList } from "./print-output.js";
import { runAction } from "./run-action.js";

function accountOf(op: Operator, named: string | undefined): string {
  const account = namedOrOnlyAccount(op.accounts, named);
  if (account === undefined) throw new CliError(`--account: give one of ${op.accounts.join(", ")}`);
  return account;
}

const accountOption = () =>
  new Option("--account <alias>", "the account (default: the only one configured)");

/** `moneyq dead-letters list|replay`: jobs that did not succeed, and running one again. */
export function deadLettersCommand(): Command {
  const command = new Command("dead-letters").description(
    "jobs that ended failed, rejected or needs_reconciliation",
  );
  command
    .command("list")
    .description("the newest dead letters of an account")
    .addOption(accountOption())
    .option("--limit <n>", "how many", intOption(1, 10_000), 100)
    .option("--json", "one JSON object per line", false)
    .action(
      runAction(async (flags: { account?: string; limit: number; json: boolean }) =>
        withOperator(async (op) => {
          const list = await op.deadLetters.list(accountOf(op, flags.account), 0, flags.limit - 1);
          printList(
            list,
            flags.json,
            (d) =>
              `${d.jobId}  ${d.kind}  ${d.result?.result ?? "failed"}  ${d.reference ?? "-"}  ${d.failedReason}`,
            "dead letters",
          );
          return EXIT.ok;
        }),
      ),
    );
  command
    .command("replay")
    .description("run a dead letter again, with the same data and the same idempotency key")
    .argument("<job-id>")
    .addOption(accountOption())
    .action(
      runAction(async (jobId: string, flags: { account?: string }) =>
        withOperator(async (op) => {
          if (!(await op.deadLetters.replay(accountOf(op, flags.account), jobId)))
            throw new CliError(`${jobId} is not a dead letter of this account`);
          process.stdout.write(`${jobId} replayed\n`);
          return EXIT.ok;
        }),
      ),
    );
  command.addCommand(resolveCommand());
  return command;
}

interface ResolveFlags {
  readonly account?: string;
  readonly result: "succeeded" | "failed";
  readonly note: string;
  readonly upstreamId?: string;
  readonly as: string;
}

/**
 * `moneyq dead-letters resolve`: says, with evidence, what the provider did of a job that ended
 * needs_reconciliation or failed (docs/reconciliation.md, "Resolving exceptions"); recorded once,
 * in the account's audit trail under the name given; with a second-person policy it waits for
 * another person's approval (API or console).
 */
function resolveCommand(): Command {
  return new Command("resolve")
    .description(
      "resolve a job left to reconciliation (or failed) with evidence, never by a resend",
    )
    .argument("<job-id>")
    .addOption(accountOption())
    .addOption(
      new Option("--result <result>", "what the provider did")
        .choices(["succeeded", "failed"])
        .makeOptionMandatory(),
    )
    .requiredOption("--note <text>", "why you know: the provider's answer, a statement line")
    .option("--upstream-id <id>", "the provider's id of the payment, where known")
    .requiredOption("--as <name>", "who resolves it, as the audit trail records")
    .action(
      runAction(async (jobId: string, flags: ResolveFlags) =>
        withOperator(async (op) => {
          const note = flags.note.trim();
          if (note.length === 0 || note.length > 500)
            throw new CliError("--note: must be 1 to 500 characters");
          const asked = {
            to: flags.result,
            note,
            ...(flags.upstreamId !== undefined && { upstreamId: flags.upstreamId }),
          };
          const account = accountOf(op, flags.account);
          const outcome = await op.resolutions
            .request(account, jobId, asked, flags.as)
            .catch((error: unknown) => {
              if (error instanceof ResolutionError)
                throw new CliError(`${error.code}: ${error.message}`, EXIT.failures);
              throw error;
            });
          process.stdout.write(
            outcome.state === "resolved"
              ? `${jobId} resolved ${flags.result}\n`
              : `${jobId} awaits another person's approval (POST /v1/jobs/${jobId}/resolve/approve)\n`,
          );
          return EXIT.ok;
        }),
      ),
    );
}
