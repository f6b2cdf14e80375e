import { Command } from "commander";
import { runAction } from "./run-action.js";

/** `moneyq demo`: the main job end to end on embedded defaults, then exits. */
export function demoCommand(): Command {
  return new Command("demo")
    .description(
      "pay out the example batches (examples/) through the embedded sandbox, with a progress bar and a summary",
    )
    .option(
      "--report-dir <dir>",
      "where the results reports go (default: a new temporary directory)",
    )
    .action(
      runAction(async (flags: { reportDir?: string }) => {
        // Loaded when it runs: the rest of the CLI starts without the service's dependencies.
        const { runDemo } = await import("./demo-run.js");
        return runDemo(flags);
      }),
    );
}
