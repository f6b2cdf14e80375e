import { Command } from "commander";
import { loadConfig } from "../config/load-config.js";
import { reachableUrl } from "../listen-url.js";
import { CliError } from "./cli-error.js";
import { EXIT } from "./exit-codes.js";
import { intOption } from "./int-option.js";
import { runAction } from "./run-action.js";

/**
 * `moneyq healthcheck`: exit 0 when the moneyq process of this host answers /healthz, on the
 * API port or, for a worker-only process, the metrics port. The Docker HEALTHCHECK runs it.
 */
export function healthcheckCommand(): Command {
  return new Command("healthcheck")
    .description(
      "exit 0 when this host's moneyq process answers /healthz (API port, then metrics port), else 1",
    )
    .option("--url <url>", "check this address instead of the configured ports")
    .option("--timeout-ms <ms>", "how long each check may take", intOption(1, 60_000), 2_000)
    .action(
      runAction(async (flags: { url?: string; timeoutMs: number }) => {
        const urls = flags.url ? [flags.url] : configuredUrls();
        for (const url of urls) {
          const healthy = await fetch(url, { signal: AbortSignal.timeout(flags.timeoutMs) }).then(
            (res) => res.ok,
            () => false,
          );
          if (healthy) {
            process.stdout.write(`healthy: ${url}\n`);
            return EXIT.ok;
          }
        }
        throw new CliError(`no healthy moneyq process at ${urls.join(" or ")}`, EXIT.failures);
      }),
    );
}

function configuredUrls(): string[] {
  const { api, metrics } = loadConfig();
  return [
    `${reachableUrl(api.host, api.port)}/healthz`,
    `${reachableUrl(metrics.host, metrics.port)}/healthz`,
  ];
}
