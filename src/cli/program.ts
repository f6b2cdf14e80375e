import { Command, type CommanderError } from "commander";
import { EXIT } from "./exit-codes.js";
import { sandboxCommand } from "./sandbox-command.js";

/** Usage errors exit 2; --help and --version exit 0, as commander decides. */
function exitOnUsageError(error: CommanderError): never {
  process.exit(error.exitCode === 0 ? EXIT.ok : EXIT.usage);
}

/** The `moneyq` command. */
export function buildProgram(): Command {
  const program = new Command("moneyq").description(
    "move money at volume through the Payments API without ever paying twice",
  );
  program.addCommand(sandboxCommand());
  // addCommand does not pass settings down, so each command gets them here.
  for (const command of [program, ...program.commands]) {
    command.showHelpAfterError().exitOverride(exitOnUsageError);
  }
  return program;
}
