import { Command, Option } from "commander";
import { loadConfig } from "../config/load-config.js";
import { ROLES, type Role } from "../service/roles.js";
import { runAction } from "./run-action.js";

/** `moneyq start`: the service (API, workers or both) until SIGTERM or SIGINT. */
export function startCommand(): Command {
  return new Command("start")
    .description(
      "run the service: the HTTP API, the workers, or both (README: configuration table)",
    )
    .addOption(
      new Option("--role <role>", "what this process runs").choices([...ROLES]).default("all"),
    )
    .action(
      runAction(async (flags: { role: Role }) => {
        // Loaded when it runs: the rest of the CLI starts without the service's dependencies.
        const { closeOnSignals, startService } = await import("../service/start-service.js");
        const config = loadConfig();
        const service = await startService({ config, role: flags.role });
        closeOnSignals(service, service.logger, config.pipeline.shutdownGraceMs);
        // Runs until a signal; closeOnSignals exits the process.
        await new Promise(() => undefined);
        return undefined;
      }),
    );
}
