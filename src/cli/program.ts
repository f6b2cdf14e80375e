import { Command, type CommanderError } from "commander";
import { batchCommand } from "./batch-command.js";
import { deadLettersCommand } from "./dead-letters-command.js";
import { demoCommand } from "./demo-command.js";
import { EXIT } from "./exit-codes.js";
import { healthcheckCommand } from "./healthcheck-command.js";
import { providerCommand } from "./provider-command.js";
import { reconcileCommand } from "./reconcile-command.js";
import { sandboxCommand } from "./sandbox-command.js";
import { startCommand } from "./start-command.js";
import { webhooksCommand } from "./webhooks-command.js";

/** Usage errors exit 2; --help and --version exit 0, as commander decides. */
function exitOnUsageError(error: CommanderError): never {
  process.exit(error.exitCode === 0 ? EXIT.ok : EXIT.usage);
}

/** The `moneyq` command. */
export function buildProgram(): Command {
  const program = new Command("moneyq").description(
    "move money at volume through the Payments API without ever paying twice",
  );
  program
    .addCommand(startCommand())
    .addCommand(batchCommand())
    .addCommand(deadLettersCommand())
    .addCommand(webhooksCommand())
    .addCommand(sandboxCommand())
    .addCommand(demoCommand())
    .addCommand(healthcheckCommand())
    .addCommand(providerCommand())
    .addCommand(reconcileCommand());
  // addCommand does not pass settings down, so each command (and subcommand) gets them here.
  const all = (c: Command): Command[] => [c, ...c.commands.flatMap(all)];
  for (const command of all(program)) {
    command.showHelpAfterError().exitOverride(exitOnUsageError);
  }
  return program;
}
