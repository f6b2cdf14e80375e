// The provider: its profile, its adapter module, its sandbox environment.
import { statSync } from "node:fs";
import { z } from "zod";
import { loadProviderProfile } from "../provider/load-profile.js";
import { DEFAULT_PROVIDER_PROFILE, type ProviderProfile } from "../provider/profile.js";
import type { AccountConfig } from "./accounts.js";
import type { ConfigIssue, EnvReader } from "./env-reader.js";
import { apiKey, matching } from "./rules.js";

/** The provider's sandbox environment (spec 5: its own address and key, never production's). */
export interface ProviderSandboxConfig {
  readonly url: string;
  /** Non-enumerable, like API keys. */
  readonly apiKey: string;
}

/** MONEYQ_PROVIDER_PROFILE: a file path; read once here, so a bad profile fails start. */
export function readProfile(file: string | undefined, issues: ConfigIssue[]): ProviderProfile {
  if (file === undefined) return DEFAULT_PROVIDER_PROFILE;
  const loaded = loadProviderProfile(file);
  if (loaded.success) return loaded.profile;
  for (const i of loaded.issues)
    issues.push({
      variable: "MONEYQ_PROVIDER_PROFILE",
      rule: i.field ? `${i.field}: ${i.rule}` : i.rule,
    });
  return DEFAULT_PROVIDER_PROFILE;
}

const PROVIDER_URL_RULE = "must be an http(s) URL ending in /v1";

export const providerUrl = matching(/^https?:\/\/[^\s/]+(\/\S*)?\/v1\/?$/, PROVIDER_URL_RULE);

/** An adapter module: a file that exists, named as Node loads an ES module. */
export const moduleFile = z.string().refine(
  (file) => {
    try {
      return /\.m?js$/.test(file) && statSync(file).isFile();
    } catch {
      return false;
    }
  },
  { message: "must be the path of an ES module file (.js or .mjs) that exists" },
);

const sameUrl = (a: string, b: string) =>
  a.replace(/\/$/, "").toLowerCase() === b.replace(/\/$/, "").toLowerCase();

/**
 * PAYMENTS_SANDBOX_API_URL and PAYMENTS_SANDBOX_API_KEY, for `moneyq provider check --submit`:
 * both or neither, and never the production address or a production account's key.
 */
export function readProviderSandbox(
  read: EnvReader,
  paymentsApiUrl: string | undefined,
  accounts: readonly AccountConfig[],
): ProviderSandboxConfig | undefined {
  const url = read.check("PAYMENTS_SANDBOX_API_URL", providerUrl, undefined);
  const key = read.check("PAYMENTS_SANDBOX_API_KEY", apiKey, undefined);
  const given = [read.text("PAYMENTS_SANDBOX_API_URL"), read.text("PAYMENTS_SANDBOX_API_KEY")];
  if (given.every((v) => v === undefined)) return undefined;
  if (given.some((v) => v === undefined)) {
    read.issues.push({
      variable: given[0] === undefined ? "PAYMENTS_SANDBOX_API_URL" : "PAYMENTS_SANDBOX_API_KEY",
      rule: "required with the other PAYMENTS_SANDBOX_ variable: the sandbox environment needs its address and its key",
    });
    return undefined;
  }
  if (url === undefined || key === undefined) return undefined;
  if (paymentsApiUrl !== undefined && sameUrl(url, paymentsApiUrl))
    read.issues.push({
      variable: "PAYMENTS_SANDBOX_API_URL",
      rule: "must not be PAYMENTS_API_URL: the provider's sandbox environment has an address of its own",
    });
  if (accounts.some((a) => a.apiKey === key))
    read.issues.push({
      variable: "PAYMENTS_SANDBOX_API_KEY",
      rule: "must not be a production account's key: sandbox and production keys are separate",
    });
  const sandbox = { url };
  Object.defineProperty(sandbox, "apiKey", { value: key, enumerable: false });
  return Object.freeze(sandbox) as ProviderSandboxConfig;
}
