// The HTTP API: where it listens, its limits, its bearer tokens and their permissions.
import { z } from "zod";
import { type AccountConfig, DEFAULT_ACCOUNT_ALIAS } from "./accounts.js";
import { embeddedUpstream } from "./basics.js";
import type { ConfigIssue, Env, EnvReader } from "./env-reader.js";
import { readJsonList } from "./json-lists.js";
import { alias, matching } from "./rules.js";

export interface ApiConfig {
  readonly host: string;
  readonly port: number;
  /** Largest request body (a batch upload), in bytes. */
  readonly bodyLimitBytes: number;
  /** Time for a whole request (headers and body) to arrive; then 408 and the connection closes. */
  readonly requestTimeoutMs: number;
  /** Time for a request's headers to arrive. */
  readonly headersTimeoutMs: number;
  /** A connection with no traffic either way for this long is closed. */
  readonly idleTimeoutMs: number;
  /** Bearer tokens; empty means every request is refused (but the embedded-sandbox dev token). */
  readonly tokens: readonly ApiToken[];
}

/**
 * What a token may do on its accounts: enqueue jobs and submit batches; approve or reject
 * work awaiting approval; operate (cancel, replay, pause and resume, webhook redelivery and
 * resume); read (every GET under /v1). Split so that who submits is not who approves.
 */
export const PERMISSIONS = Object.freeze(["submit", "approve", "operate", "read"] as const);

export type Permission = (typeof PERMISSIONS)[number];

/** A bearer token of the HTTP API, the accounts it may use and what it may do on them. */
export interface ApiToken {
  /** Names the token in logs; never the token itself. */
  readonly name: string;
  /** Non-enumerable, like API keys. */
  readonly token: string;
  readonly accounts: readonly string[];
  /** Every permission when the entry names none, so tokens configured before them keep working. */
  readonly permissions: readonly Permission[];
}

/** The HTTP API: where it listens, its limits, and its tokens (over the configured accounts). */
export function readApi(
  read: EnvReader,
  paymentsApiUrl: string | undefined,
  accounts: readonly AccountConfig[],
): ApiConfig {
  return Object.freeze({
    host: read.host("MONEYQ_API_HOST"),
    port: read.port("MONEYQ_API_PORT"),
    bodyLimitBytes: read.int("MONEYQ_API_BODY_LIMIT_BYTES"),
    requestTimeoutMs: read.int("MONEYQ_API_REQUEST_TIMEOUT_MS"),
    headersTimeoutMs: read.int("MONEYQ_API_HEADERS_TIMEOUT_MS"),
    idleTimeoutMs: read.int("MONEYQ_API_IDLE_TIMEOUT_MS"),
    tokens: Object.freeze(
      readTokens(
        read.text("MONEYQ_API_TOKENS"),
        read.env,
        read.issues,
        embeddedUpstream({ paymentsApiUrl })
          ? [DEFAULT_ACCOUNT_ALIAS]
          : accounts.map((a) => a.alias),
      ),
    ),
  });
}

/**
 * A token's `permissions`: a non-empty list of distinct PERMISSIONS. A word that is not one
 * is named by its place, not its value, in case a token was pasted there by mistake.
 */
function permissionRules(words: unknown[], ctx: z.RefinementCtx): void {
  const rule = (message: string) => ctx.addIssue({ code: "custom", message });
  if (words.length === 0) rule("must list at least one permission (leave it out for all four)");
  words.forEach((word, i) => {
    if (!(PERMISSIONS as readonly unknown[]).includes(word))
      rule(
        `the value at [${i}] is not a permission: each must be one of ${PERMISSIONS.join(", ")}`,
      );
  });
  for (const permission of PERMISSIONS)
    if (words.filter((w) => w === permission).length > 1)
      rule(`lists "${permission}" more than once`);
}

const TokenEntry = z
  .strictObject({
    name: alias,
    token: matching(/^\S{16,512}$/, "must be 16 to 512 characters without spaces").optional(),
    tokenEnv: matching(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be a variable name").optional(),
    accounts: z.array(z.string()).min(1),
    permissions: z
      .array(z.unknown())
      .superRefine(permissionRules)
      .transform((words) => PERMISSIONS.filter((p) => words.includes(p)))
      .optional(),
  })
  .refine((t) => (t.token === undefined) !== (t.tokenEnv === undefined), {
    message: "give exactly one of token or tokenEnv",
  });

function readTokens(
  listed: string | undefined,
  env: Env,
  issues: ConfigIssue[],
  aliases: readonly string[],
): ApiToken[] {
  if (listed === undefined) return [];
  const variable = "MONEYQ_API_TOKENS";
  const entries = readJsonList(listed, variable, TokenEntry, "tokens", issues);
  if (entries === undefined) return [];
  const out: ApiToken[] = [];
  entries.forEach((entry, index) => {
    let secret = entry.token;
    if (entry.tokenEnv !== undefined) {
      secret = env[entry.tokenEnv];
      if (secret === undefined || !/^\S{16,512}$/.test(secret)) {
        issues.push({
          variable: `${variable}[${index}].tokenEnv`,
          rule: `variable ${entry.tokenEnv} must hold 16 to 512 characters without spaces`,
        });
        return;
      }
    }
    for (const a of entry.accounts)
      if (!aliases.includes(a))
        issues.push({
          variable: `${variable}[${index}].accounts`,
          rule: `no account "${a}" is configured`,
        });
    if (out.some((t) => t.name === entry.name))
      issues.push({
        variable: `${variable}[${index}].name`,
        rule: `name "${entry.name}" is used twice`,
      });
    const token: Omit<ApiToken, "token"> = {
      name: entry.name,
      accounts: Object.freeze([...entry.accounts]),
      permissions: entry.permissions ? Object.freeze(entry.permissions) : PERMISSIONS,
    };
    Object.defineProperty(token, "token", { value: secret, enumerable: false });
    out.push(Object.freeze(token as ApiToken));
  });
  return out;
}
