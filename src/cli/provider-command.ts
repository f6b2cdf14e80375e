import { writeFileSync } from "node:fs";
import { Command } from "commander";
import type { Config } from "../config/load-config.js";
import { loadConfig } from "../config/load-config.js";
import { validate } from "../contract/field-issues.js";
import { ExchangeRateQuery } from "../contract/utility.js";
import type { Reader } from "../provider/check-answer.js";
import { type CheckPlan, kindsOf, requestsOf } from "./check-plan.js";
import type { CheckReport, CheckVerdict } from "./check-report.js";
import { CliError } from "./cli-error.js";
import { EXIT } from "./exit-codes.js";
import { intOption } from "./int-option.js";
import type { RateQuery } from "./provider-check.js";
import { runAction } from "./run-action.js";
import { selectedAccounts } from "./selected-accounts.js";

interface CheckFlags {
  readonly account?: string;
  readonly kinds?: string;
  readonly requests?: string;
  readonly submit?: boolean;
  readonly answers?: string;
  readonly save?: string;
  readonly rate: number;
  readonly from: string;
  readonly to: string;
  readonly fromIso2: string;
  readonly toIso2: string;
  readonly amount: string;
}

/** `moneyq provider`: what moneyq understands of the configured provider. */
export function providerCommand(): Command {
  const provider = new Command("provider").description(
    "connect a provider: check the provider profile on real answers, or propose one (docs/provider-profile.md)",
  );
  provider
    .command("check")
    .description(
      "read real answers through the provider profile and say, entry by entry, what it reads. Without flags: the read-only operations of each configured account (rates, lists, a lookup of a listed item; never moves money). --submit: one smallest real submission of each kind in your provider's sandbox environment. --answers DIR: answers you saved. Exit 0 when every entry the pipeline reads was read on a real answer of its operation, 1 when something is unreadable, 3 when something was not verified",
    )
    .option("--account <alias>", "check this account only (default: every configured account)")
    .option("--kinds <list>", "the job kinds you use, comma-separated (default: every kind)")
    .option(
      "--requests <file>",
      "JSON of job kind to the request --submit sends (and the stable sub-account a lookup needs)",
    )
    .option(
      "--submit",
      "send one smallest submission of each kind to PAYMENTS_SANDBOX_API_URL (never production)",
    )
    .option("--answers <dir>", "check the answers saved in DIR (operation.json each), offline")
    .option("--save <dir>", "save every answer read to DIR, for --answers and provider suggest")
    .option(
      "--rate <n>",
      "requests per second to the sandbox environment with --submit",
      intOption(1, 1000),
      5,
    )
    .option("--from <currency>", "source currency of the rate lookup", "USD")
    .option("--to <currency>", "target currency of the rate lookup", "NGN")
    .option("--from-iso2 <code>", "4-character code of the source (4.10)", "USAA")
    .option("--to-iso2 <code>", "4-character code of the target (4.10)", "NGAA")
    .option("--amount <n>", "amount of the rate lookup", "100")
    .action(runAction(runCheck));
  provider
    .command("suggest")
    .description(
      "propose a provider profile from saved answers (where ids, statuses and reasons most likely sit, the status words seen), to edit and then check",
    )
    .requiredOption("--answers <dir>", "the answers, one file per operation (operation.json)")
    .option("--out <file>", "write the profile here instead of to standard output")
    .action(runAction(runSuggest));
  return provider;
}

/** The rate lookup of the flags, checked by the contract's own rule; refused naming the flag. */
function rateQueryOf(flags: CheckFlags): RateQuery {
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

const CONCLUSION: Record<CheckVerdict, string> = {
  ok: "every entry the pipeline reads for these kinds was read on a real answer of its operation: go ahead\n",
  unreadable:
    "some entries could not be read: fix MONEYQ_PROVIDER_PROFILE (or the adapter) before the first payout (docs/provider-profile.md)\n",
  not_verified:
    "nothing unreadable, but some entries were not read on a real answer (listed above): no go-ahead until they are\n",
};

/** What a check against the provider (its sandbox, or production's reads) runs with. */
interface CheckRun {
  readonly config: Config;
  readonly reader: Reader;
  readonly plan: CheckPlan;
  readonly rateQuery: RateQuery;
  readonly flags: CheckFlags;
}

async function runCheck(flags: CheckFlags): Promise<number> {
  const rateQuery = rateQueryOf(flags);
  if (flags.submit === true && flags.answers !== undefined)
    throw new CliError("give --submit or --answers, not both");
  const config = loadConfig();
  const kinds = kindsOf(flags.kinds);
  const plan: CheckPlan = { kinds, requests: requestsOf(flags.requests, config.provider) };
  // Loaded when it runs: the rest of the CLI starts without the client's dependencies.
  const { openProviderAdapter } = await import("../service/provider-adapter.js");
  const reader: Reader = { profile: config.provider, adapter: await openProviderAdapter(config) };
  const check: CheckRun = { config, reader, plan, rateQuery, flags };
  const reports =
    flags.answers !== undefined
      ? await answersReport(reader, plan, flags.answers)
      : flags.submit === true
        ? await submitReport(check)
        : await readsReports(check);
  const { formatReport, verdictOf } = await import("./check-report.js");
  for (const report of reports) process.stdout.write(formatReport(report));
  const verdict = verdictOf(reports);
  process.stdout.write(CONCLUSION[verdict]);
  if (verdict === "unreadable") return EXIT.failures;
  return verdict === "not_verified" ? EXIT.notVerified : EXIT.ok;
}

async function answersReport(reader: Reader, plan: CheckPlan, dir: string): Promise<CheckReport[]> {
  const { readSavedAnswers } = await import("./saved-answers.js");
  const { checkSavedAnswers } = await import("./provider-answers.js");
  const { unverifiedEntries } = await import("./check-report.js");
  const checks = checkSavedAnswers(reader, readSavedAnswers(dir));
  return [
    {
      name: `answers in ${dir}`,
      checks,
      unverified: unverifiedEntries(plan.kinds, checks, "answers"),
    },
  ];
}

/** A client of the check: the profile and adapter the pipeline reads with, the service's timeouts. */
async function checkClient(config: Config, reader: Reader, baseUrl: string, apiKey: string) {
  // Loaded when it runs: the rest of the CLI starts without the client's dependencies.
  const { PaymentsClient } = await import("../client/payments-client.js");
  return new PaymentsClient({
    baseUrl,
    apiKey,
    profile: reader.profile,
    adapter: reader.adapter,
    connectTimeoutMs: config.http.connectTimeoutMs,
    requestTimeoutMs: config.http.requestTimeoutMs,
  });
}

/** --submit: the provider's sandbox environment, never the production address or keys. */
async function submitReport(check: CheckRun): Promise<CheckReport[]> {
  const { config, reader, plan, rateQuery, flags } = check;
  const sandbox = config.providerSandbox;
  if (sandbox === undefined)
    throw new CliError(
      "--submit sends real submissions, so only to your provider's sandbox environment: set PAYMENTS_SANDBOX_API_URL and PAYMENTS_SANDBOX_API_KEY (never the production ones)",
    );
  const { checkRates } = await import("./provider-check.js");
  const { checkSubmissions, pacedSend } = await import("./provider-submit.js");
  const { savingSend } = await import("./saved-answers.js");
  const { unverifiedEntries } = await import("./check-report.js");
  process.stdout.write(`submits to your provider's sandbox environment at ${sandbox.url}\n`);
  const client = await checkClient(config, reader, sandbox.url, sandbox.apiKey);
  try {
    const paced = pacedSend(client, flags.rate);
    const send = flags.save === undefined ? paced : savingSend(paced, flags.save);
    const checks = [
      ...(await checkRates(reader, send, rateQuery)),
      ...(await checkSubmissions(reader, send, plan)),
    ];
    const unverified = unverifiedEntries(plan.kinds, checks, "submit");
    return [{ name: "sandbox environment", checks, unverified }];
  } finally {
    await client.close();
  }
}

/** Without flags: each account's read-only operations, through its rate gate. */
async function readsReports(check: CheckRun): Promise<CheckReport[]> {
  const { config, reader, plan, rateQuery, flags } = check;
  const { baseUrl, accounts } = selectedAccounts(
    config,
    flags.account,
    "provider check needs PAYMENTS_API_URL and an API key: it checks a real provider, not the embedded sandbox (or use --submit with PAYMENTS_SANDBOX_API_URL, or --answers DIR)",
  );
  const { checkReads } = await import("./provider-check.js");
  const { openCheckGate } = await import("./check-gate.js");
  const { savingSend } = await import("./saved-answers.js");
  const { unverifiedEntries } = await import("./check-report.js");
  const gate = await openCheckGate(config);
  process.stdout.write(`reads through the rate gate of ${gate.where}\n`);
  const reports: CheckReport[] = [];
  try {
    for (const account of accounts) {
      // A prefix that is not the service's shares no rate and no pause with it.
      if (!(await gate.served(account)))
        process.stdout.write(
          `no moneyq service has opened account ${account.alias}'s queue under this prefix: if one runs, set MONEYQ_REDIS_PREFIX as it has it\n`,
        );
      const client = await checkClient(config, reader, baseUrl, account.apiKey);
      try {
        const gated = gate.gatedFor(account);
        const direct = (op: Parameters<typeof client.send>[0], input: unknown) =>
          gated(() => client.send(op, input as never));
        const send = flags.save === undefined ? direct : savingSend(direct, flags.save);
        const checks = await checkReads(reader, send, rateQuery, plan);
        const unverified = unverifiedEntries(plan.kinds, checks, "reads");
        reports.push({ name: `account ${account.alias}`, checks, unverified });
      } finally {
        await client.close();
      }
    }
  } finally {
    await gate.close();
  }
  return reports;
}

async function runSuggest(flags: { answers: string; out?: string }): Promise<number> {
  const { readSavedAnswers, groupSaved } = await import("./saved-answers.js");
  const { suggestProfile } = await import("../provider/suggest-profile.js");
  const { parseProviderProfile } = await import("../provider/profile.js");
  const suggestion = suggestProfile(groupSaved(readSavedAnswers(flags.answers)));
  const parsed = parseProviderProfile(suggestion.profile);
  const text = `${JSON.stringify(suggestion.profile, null, 2)}\n`;
  if (flags.out === undefined) process.stdout.write(text);
  else writeFileSync(flags.out, text);
  for (const note of suggestion.notes) process.stderr.write(`note: ${note}\n`);
  if (!parsed.success)
    for (const i of parsed.issues)
      process.stderr.write(`note: ${i.field}: ${i.rule}: edit it before use\n`);
  process.stderr.write(
    `check it: MONEYQ_PROVIDER_PROFILE=${flags.out ?? "<the file>"} moneyq provider check --answers ${flags.answers} (then --submit against your sandbox environment)\n`,
  );
  return parsed.success ? EXIT.ok : EXIT.failures;
}
