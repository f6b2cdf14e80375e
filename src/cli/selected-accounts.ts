import type { AccountConfig, Config } from "../config/load-config.js";
import { CliError } from "./cli-error.js";

/**
 * The real provider's accounts a command reads, all of them or the one `--account` names;
 * refused without PAYMENTS_API_URL (`why` says what the command reads there).
 */
export function selectedAccounts(
  config: Config,
  account: string | undefined,
  why: string,
): { readonly baseUrl: string; readonly accounts: readonly AccountConfig[] } {
  const baseUrl = config.paymentsApiUrl;
  if (baseUrl === undefined) throw new CliError(why);
  const accounts = config.accounts.filter((a) => !account || a.alias === account);
  if (accounts.length === 0)
    throw new CliError(`--account: no account is configured with alias "${account}"`);
  return { baseUrl, accounts };
}
