import { Command } from "commander";
import { loadConfig } from "../config.js";
import { validate } from "../contract/field-issues.js";
import { ExchangeRateQuery } from "../contract/utility.js";
import { CliError } from "./cli-error.js";
import { EXIT } from "./exit-codes.js";
import { runAction } from "./run-action.js";

interface CheckFlags {
  readonly account?: string;
  readonly from: string;
  readonly to: string;
  readonly fromIso2: string;
  readonly toIso2: string;
  readonly amount: string;
}

/** `moneyq provider`: what moneyq understands of the configured provider. */
export function providerCommand(): Command {
  const provider = new Command("provider").description(
    "check the configured provider against the provider profile (docs/provider-profile.md)",
  );
  provider
    .command("check")
    .description(
      "call the read-only operations (rates, transaction and order lists) and show what the profile reads; never moves money. Exit 0 when everything needed was read, 1 when something is unreadable, 3 when something could not be verified (an empty list, a refused key, no answer)",
    )
    .option("--account <alias>", "check this account only (default: every configured account)")
    .option("--from <currency>", "source currency of the rate lookup", "USD")
    .option("--to <currency>", "target currency of the rate lookup", "NGN")
    .option("--from-iso2 <code>", "4-character code of the source (4.10)", "USAA")
    .option("--to-iso2 <code>", "4-character code of the target (4.10)", "NGAA")
    .option("--amount <n>", "amount of the rate lookup", "100")
    .action(runAction(runCheck));
  return provider;
}

/** The rate lookup of the flags, checked by the contract's own rule; refused naming the flag. */
function rateQueryOf(flags: CheckFlags) {
  const amount = Number(flags.amount);
  if (flags.amount.trim() === "" || !Number.isFinite(amount) || amount <= 0)
    throw new CliError("--amount: must be a finite positive number", EXIT.usage);
  const query = {
    fromCurrency: flags.from,
    toCurrency: flags.to,
    fromCurrencyIso2: flags.fromIso2,
    toCurrencyIso2: flags.toIso2,
    amount,
  };
  const checked = validate(ExchangeRateQuery, query);
  if (!checked.success) {
    const issues = checked.issues.map((i) => `${FLAG_OF[i.field] ?? i.field}: ${i.rule}`);
    throw new CliError(issues.join("\n"), EXIT.usage);
  }
  return query;
}

const FLAG_OF: Record<string, string> = {
  fromCurrency: "--from",
  toCurrency: "--to",
  fromCurrencyIso2: "--from-iso2",
  toCurrencyIso2: "--to-iso2",
  amount: "--amount",
};

const CONCLUSION = {
  ok: "every entry needed was read through the provider profile\n",
  unreadable:
    "some answers could not be read: fix MONEYQ_PROVIDER_PROFILE (docs/provider-profile.md) before the first payout\n",
  not_verified:
    "nothing unreadable, but some entries were not verified (listed above): no go-ahead until they are\n",
} as const;

async function runCheck(flags: CheckFlags): Promise<number> {
  const rateQuery = rateQueryOf(flags);
  const config = loadConfig();
  if (config.paymentsApiUrl === undefined)
    throw new CliError(
      "provider check needs PAYMENTS_API_URL and an API key: it checks a real provider, not the embedded sandbox",
      EXIT.usage,
    );
  const accounts = config.accounts.filter((a) => !flags.account || a.alias === flags.account);
  if (accounts.length === 0)
    throw new CliError(
      `--account: no account is configured with alias "${flags.account}"`,
      EXIT.usage,
    );
  // Loaded when it runs: the rest of the CLI starts without the client's dependencies.
  const { PaymentsClient } = await import("../client/payments-client.js");
  const { checkProvider, formatChecks, verdictOf } = await import("./provider-check.js");
  const { openCheckGate } = await import("./check-gate.js");
  const gate = await openCheckGate(config);
  process.stdout.write(`reads through the rate gate of ${gate.where}\n`);
  const all = [];
  try {
    for (const account of accounts) {
      // A prefix that is not the service's shares no rate and no pause with it.
      if (!(await gate.served(account)))
        process.stdout.write(
          `no moneyq service has opened account ${account.alias}'s queue under this prefix: if one runs, set MONEYQ_REDIS_PREFIX as it has it\n`,
        );
      const client = new PaymentsClient({
        baseUrl: config.paymentsApiUrl,
        apiKey: account.apiKey,
        profile: config.provider,
        connectTimeoutMs: config.http.connectTimeoutMs,
        requestTimeoutMs: config.http.requestTimeoutMs,
      });
      try {
        const gated = gate.gatedFor(account);
        const checks = await checkProvider(client, config.provider, rateQuery, gated);
        process.stdout.write(formatChecks(account.alias, checks));
        all.push(...checks);
      } finally {
        await client.close();
      }
    }
  } finally {
    await gate.close();
  }
  const verdict = verdictOf(all);
  process.stdout.write(CONCLUSION[verdict]);
  if (verdict === "unreadable") return EXIT.failures;
  return verdict === "not_verified" ? EXIT.notVerified : EXIT.ok;
}
