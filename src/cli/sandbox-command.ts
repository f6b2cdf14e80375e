import { Command, InvalidArgumentError, Option } from "commander";
import type { ProviderProfile } from "../provider/profile.js";
import {
  isReversedStatusWord,
  REVERSAL_STYLES,
  REVERSED_STATUS_RULE,
  type ReversalStyle,
  SANDBOX_DEFAULTS,
} from "../sandbox/options.js";
import { CliError } from "./cli-error.js";
import { EXIT } from "./exit-codes.js";
import { intOption } from "./int-option.js";
import { runAction } from "./run-action.js";

interface SandboxFlags {
  readonly port: number;
  readonly host: string;
  readonly json: boolean;
  readonly seed: number;
  readonly settleDelayMs: number;
  readonly profile?: string;
  readonly specMinimal: boolean;
  readonly rejectRepeatedKeys: boolean;
  readonly reverseAfterMs?: number;
  readonly reversalStyle: ReversalStyle;
  readonly reversedStatus: string;
}

/** A year: the longest a magic-value reversal waits. */
const YEAR_MS = 365 * 24 * 3600 * 1000;

function reversedStatusOption(value: string): string {
  if (!isReversedStatusWord(value)) throw new InvalidArgumentError(REVERSED_STATUS_RULE);
  return value;
}

/** `moneyq sandbox`: the stateful Payments API sandbox on a real port, until SIGINT or SIGTERM. */
export function sandboxCommand(): Command {
  return new Command("sandbox")
    .description("run the stateful Payments API sandbox (docs/sandbox.md)")
    .option("-p, --port <port>", "port to listen on (0: a free one)", intOption(0, 65535), 4010)
    .option("--host <host>", "address to listen on", SANDBOX_DEFAULTS.host)
    .option(
      "--json",
      "print exactly one JSON line {baseUrl, apiKey, controlUrl} once listening",
      false,
    )
    .option(
      "--seed <n>",
      "seed of the fault generators",
      intOption(0, 2 ** 31 - 1),
      SANDBOX_DEFAULTS.seed,
    )
    .option(
      "--settle-delay-ms <ms>",
      "how long PENDING lasts before it resolves",
      intOption(0, 86_400_000),
      SANDBOX_DEFAULTS.settleDelayMs,
    )
    .option(
      "--profile <file>",
      "answer in the dialect a provider profile describes (docs/provider-profile.md)",
    )
    .option(
      "--spec-minimal",
      "answer every operation with only the envelope and an empty data object",
      false,
    )
    .option(
      "--reject-repeated-keys",
      "refuse a repeated idempotency key with a 400 instead of replaying the first answer",
      false,
    )
    .option(
      "--reverse-after-ms <ms>",
      "how long after success a magic-value payout is reversed, on the sandbox's clock (default: --settle-delay-ms)",
      intOption(0, YEAR_MS),
    )
    .addOption(
      new Option(
        "--reversal-style <style>",
        "how the reversals of 0000000003 and 888.88 show: a reversing transaction, or a status change",
      )
        .choices(REVERSAL_STYLES)
        .default(SANDBOX_DEFAULTS.reversalStyle),
    )
    .option(
      "--reversed-status <word>",
      "the status word of a return shown as a status change",
      reversedStatusOption,
      SANDBOX_DEFAULTS.reversedStatus,
    )
    .action(
      runAction(async (flags: SandboxFlags) => {
        if (flags.profile !== undefined && flags.specMinimal)
          throw new CliError("give --profile or --spec-minimal, not both", EXIT.usage);
        const profile = flags.profile === undefined ? undefined : await readProfile(flags.profile);
        // Loaded when it runs: the rest of the CLI starts without the sandbox's dependencies.
        const { startSandbox } = await import("../sandbox/start-sandbox.js");
        const sandbox = await startSandbox({
          port: flags.port,
          host: flags.host,
          seed: flags.seed,
          settleDelayMs: flags.settleDelayMs,
          ...(profile && { profile }),
          specMinimal: flags.specMinimal,
          rejectRepeatedKeys: flags.rejectRepeatedKeys,
          ...(flags.reverseAfterMs !== undefined && { reverseAfterMs: flags.reverseAfterMs }),
          reversalStyle: flags.reversalStyle,
          reversedStatus: flags.reversedStatus,
        });
        const { baseUrl, apiKey, controlUrl } = sandbox;
        if (flags.json) {
          process.stdout.write(`${JSON.stringify({ baseUrl, apiKey, controlUrl })}\n`);
        } else {
          process.stdout.write(
            `moneyq sandbox listening\n  base URL:    ${baseUrl}\n  API key:     ${apiKey}\n  control API: ${controlUrl}\n`,
          );
        }
        await new Promise<void>((resolve) => {
          process.once("SIGINT", resolve);
          process.once("SIGTERM", resolve);
        });
        await sandbox.close();
        return EXIT.ok;
      }),
    );
}

async function readProfile(file: string): Promise<ProviderProfile> {
  const { loadProviderProfile } = await import("../provider/load-profile.js");
  const loaded = loadProviderProfile(file);
  if (loaded.success) return loaded.profile;
  const issues = loaded.issues.map((i) => (i.field ? `${i.field}: ${i.rule}` : i.rule));
  throw new CliError(`--profile ${file}:\n  ${issues.join("\n  ")}`, EXIT.usage);
}
