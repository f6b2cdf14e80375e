// The accounts: MONEYQ_ACCOUNTS or its file, their keys, rates and concurrency.
import { z } from "zod";
import { readBoundedFile } from "../bounded-file.js";
import type { ProviderProfile } from "../provider/profile.js";
import { type Basics, embeddedUpstream } from "./basics.js";
import type { ConfigIssue, Env, EnvReader } from "./env-reader.js";
import { readJsonList } from "./json-lists.js";
import { API_KEY_RULE, alias, apiKey, matching } from "./rules.js";

/** One upstream business account, known to moneyq by its alias. */
export interface AccountConfig {
  readonly alias: string;
  /** Non-enumerable: JSON.stringify, loggers and inspectors of the config never see it. */
  readonly apiKey: string;
  /** Requests per second this account may send, across every worker process. */
  readonly ratePerSecond: number;
  /** Jobs of this account processed at once by one worker process. */
  readonly concurrency: number;
}

/** Alias of the account configured by PAYMENTS_API_KEY. */
export const DEFAULT_ACCOUNT_ALIAS = "default";

/**
 * The account an operation acts on: `named` when it is one of `accounts`, the only one when
 * none is named; undefined when `named` is not among them or several could be meant.
 */
export function namedOrOnlyAccount(
  accounts: readonly string[],
  named: string | undefined,
): string | undefined {
  if (named === undefined) return accounts.length === 1 ? accounts[0] : undefined;
  return accounts.includes(named) ? named : undefined;
}

const AccountEntry = z
  .strictObject({
    alias,
    apiKey: apiKey.optional(),
    apiKeyEnv: matching(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be a variable name").optional(),
    apiKeyRef: matching(
      /^[A-Za-z0-9_.:-]{1,128}$/,
      "must be a name of 1 to 128 letters, digits, '.', ':', '_' or '-'",
    ).optional(),
    ratePerSecond: z.int().min(1).max(100_000).optional(),
    concurrency: z.int().min(1).max(1_000).optional(),
  })
  .refine((a) => [a.apiKey, a.apiKeyEnv, a.apiKeyRef].filter((k) => k !== undefined).length === 1, {
    message: "give exactly one of apiKey, apiKeyEnv or apiKeyRef",
  });

/**
 * Largest MONEYQ_ACCOUNTS_FILE or MONEYQ_ACCOUNT_KEYS_FILE read: some 300,000 accounts, far
 * beyond any real list, and still a bounded read at start.
 */
const MAX_ACCOUNT_FILE_MIB = 32;

/** The accounts a policy may name: the configured ones, or the embedded sandbox's. */
export function aliasesWithPolicies(
  basics: { readonly paymentsApiUrl: string | undefined },
  accounts: readonly AccountConfig[],
): string[] {
  return embeddedUpstream({ paymentsApiUrl: basics.paymentsApiUrl })
    ? [DEFAULT_ACCOUNT_ALIAS]
    : accounts.map((a) => a.alias);
}

/**
 * PAYMENTS_API_KEY's account and those listed (MONEYQ_ACCOUNTS or MONEYQ_ACCOUNTS_FILE),
 * checked together and against the profile.
 */
export function readAllAccounts(read: EnvReader, basics: Basics): AccountConfig[] {
  const { issues } = read;
  const { rate, concurrency, provider, paymentsApiUrl } = basics;
  const accounts: AccountConfig[] = [];
  if (basics.defaultKey !== undefined) {
    accounts.push(account(DEFAULT_ACCOUNT_ALIAS, basics.defaultKey, rate, concurrency));
  }
  const list = accountList(read);
  const keys = readAccountKeys(read);
  if (list !== undefined) {
    accounts.push(...readAccounts(list, { env: read.env, keys }, issues, { rate, concurrency }));
  }
  const listVariable = list?.variable ?? "MONEYQ_ACCOUNTS";
  const seen = new Set<string>();
  for (const a of accounts) {
    if (seen.has(a.alias))
      issues.push({ variable: listVariable, rule: `alias "${a.alias}" is configured twice` });
    seen.add(a.alias);
  }
  checkKeyPattern(provider, accounts, listVariable, issues);
  if (paymentsApiUrl !== undefined && accounts.length === 0 && issues.length === 0) {
    issues.push({
      variable: "PAYMENTS_API_KEY",
      rule: "required when PAYMENTS_API_URL is set (or configure MONEYQ_ACCOUNTS or MONEYQ_ACCOUNTS_FILE)",
    });
  }
  if (paymentsApiUrl === undefined && accounts.length > 0) {
    issues.push({
      variable: "PAYMENTS_API_URL",
      rule: "required when an API key is configured (unset every key to use the embedded sandbox)",
    });
  }
  return accounts;
}

/** A list of accounts as JSON text, and the variable it came from. */
interface AccountList {
  readonly variable: "MONEYQ_ACCOUNTS" | "MONEYQ_ACCOUNTS_FILE";
  readonly text: string;
}

/**
 * MONEYQ_ACCOUNTS, or the file MONEYQ_ACCOUNTS_FILE names (read once, here): one or the
 * other, so that every account is listed in one place.
 */
function accountList(read: EnvReader): AccountList | undefined {
  const inline = read.text("MONEYQ_ACCOUNTS");
  const file = read.text("MONEYQ_ACCOUNTS_FILE");
  if (file === undefined)
    return inline === undefined ? undefined : { variable: "MONEYQ_ACCOUNTS", text: inline };
  if (inline !== undefined) {
    read.issues.push({
      variable: "MONEYQ_ACCOUNTS_FILE",
      rule: "must not be set with MONEYQ_ACCOUNTS: list the accounts in one or the other",
    });
    return undefined;
  }
  const loaded = readBoundedFile(file, MAX_ACCOUNT_FILE_MIB);
  if ("rule" in loaded) {
    read.issues.push({ variable: "MONEYQ_ACCOUNTS_FILE", rule: loaded.rule });
    return undefined;
  }
  return { variable: "MONEYQ_ACCOUNTS_FILE", text: loaded.text };
}

/**
 * MONEYQ_ACCOUNT_KEYS_FILE's keys by name, which accounts name by `apiKeyRef`: "unset", or
 * "refused" when the file's problem is reported already. Its values are judged where an
 * account names them, and never shown.
 */
type AccountKeys = Readonly<Record<string, unknown>> | "unset" | "refused";

function readAccountKeys(read: EnvReader): AccountKeys {
  const variable = "MONEYQ_ACCOUNT_KEYS_FILE";
  const file = read.text(variable);
  if (file === undefined) return "unset";
  if (
    read.text("MONEYQ_ACCOUNTS") === undefined &&
    read.text("MONEYQ_ACCOUNTS_FILE") === undefined
  ) {
    read.issues.push({
      variable,
      rule: "is read only with MONEYQ_ACCOUNTS or MONEYQ_ACCOUNTS_FILE, whose accounts name its keys by apiKeyRef",
    });
    return "refused";
  }
  const loaded = readBoundedFile(file, MAX_ACCOUNT_FILE_MIB);
  let json: unknown;
  try {
    json = "rule" in loaded ? undefined : JSON.parse(loaded.text);
  } catch {
    json = undefined;
  }
  if (json !== null && typeof json === "object" && !Array.isArray(json))
    return json as Record<string, unknown>;
  read.issues.push({
    variable,
    rule: "rule" in loaded ? loaded.rule : 'must be a JSON object of keys by name: {"name":"key"}',
  });
  return "refused";
}

/** The profile's own rule for keys, when it has one; names the variable, never the key. */
function checkKeyPattern(
  provider: ProviderProfile,
  accounts: readonly AccountConfig[],
  listVariable: string,
  issues: ConfigIssue[],
): void {
  if (provider.apiKeyPattern === undefined) return;
  const pattern = new RegExp(provider.apiKeyPattern, "u");
  for (const a of accounts) {
    if (pattern.test(a.apiKey)) continue;
    issues.push({
      variable:
        a.alias === DEFAULT_ACCOUNT_ALIAS ? "PAYMENTS_API_KEY" : `${listVariable} (${a.alias})`,
      rule: "must match the provider profile's apiKeyPattern",
    });
  }
}

/** An account whose key is hidden from enumeration, so it cannot leak through a log line. */
export function account(
  alias: string,
  key: string,
  ratePerSecond: number,
  concurrency: number,
): AccountConfig {
  const entry = { alias, ratePerSecond, concurrency } as AccountConfig;
  Object.defineProperty(entry, "apiKey", { value: key, enumerable: false });
  return Object.freeze(entry);
}

/** Where an account entry's key may come from: a variable, or MONEYQ_ACCOUNT_KEYS_FILE. */
interface KeySources {
  readonly env: Env;
  readonly keys: AccountKeys;
}

function readAccounts(
  list: AccountList,
  sources: KeySources,
  issues: ConfigIssue[],
  defaults: { rate: number; concurrency: number },
): AccountConfig[] {
  const { variable } = list;
  const entries = readJsonList(list.text, variable, AccountEntry, "accounts", issues);
  if (entries === undefined) return [];
  let { keys } = sources;
  const firstRef = entries.findIndex((e) => e.apiKeyRef !== undefined);
  if (keys === "unset" && firstRef >= 0) {
    // One missing file, said once rather than once per account.
    issues.push({
      variable: `${variable}[${firstRef}].apiKeyRef`,
      rule: "names a key in MONEYQ_ACCOUNT_KEYS_FILE, which is not set",
    });
    keys = "refused";
  }
  const out: AccountConfig[] = [];
  entries.forEach((entry, index) => {
    const key = entryKey(entry, `${variable}[${index}]`, { env: sources.env, keys }, issues);
    if (key === undefined) return;
    out.push(
      account(
        entry.alias,
        key,
        entry.ratePerSecond ?? defaults.rate,
        entry.concurrency ?? defaults.concurrency,
      ),
    );
  });
  return out;
}

/**
 * An account entry's key, inline or from where it names; undefined (with an issue naming the
 * entry, never the key) when that is unset or the key breaks the rule.
 */
function entryKey(
  entry: z.output<typeof AccountEntry>,
  where: string,
  sources: KeySources,
  issues: ConfigIssue[],
): string | undefined {
  if (entry.apiKey !== undefined) return entry.apiKey;
  if (entry.apiKeyEnv !== undefined) {
    const value = sources.env[entry.apiKeyEnv];
    if (value === undefined || value === "") {
      issues.push({
        variable: `${where}.apiKeyEnv`,
        rule: `variable ${entry.apiKeyEnv} is not set`,
      });
      return undefined;
    }
    if (apiKey.safeParse(value).success) return value;
    issues.push({ variable: entry.apiKeyEnv, rule: API_KEY_RULE });
    return undefined;
  }
  const { keys } = sources;
  if (typeof keys === "string" || entry.apiKeyRef === undefined) return undefined;
  const value = Object.hasOwn(keys, entry.apiKeyRef) ? keys[entry.apiKeyRef] : undefined;
  if (typeof value === "string" && apiKey.safeParse(value).success) return value;
  issues.push({
    variable: `${where}.apiKeyRef`,
    rule:
      value === undefined
        ? "names no key in MONEYQ_ACCOUNT_KEYS_FILE"
        : `its key in MONEYQ_ACCOUNT_KEYS_FILE ${API_KEY_RULE}`,
  });
  return undefined;
}
