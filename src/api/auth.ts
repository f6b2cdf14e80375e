import { createHash, timingSafeEqual } from "node:crypto";
import { type ApiToken, namedOrOnlyAccount, type Permission } from "../config/load-config.js";
import { ApiError } from "./api-error.js";

/** Who made a request: the token's name, the accounts it may use and what it may do. */
export interface Caller {
  readonly name: string;
  readonly accounts: readonly string[];
  readonly permissions: readonly Permission[];
}

const digest = (value: string) => createHash("sha256").update(value).digest();

/**
 * Finds the token of an `Authorization: Bearer ...` header. Every configured token is
 * compared, in constant time over equal-length digests, so timing tells nothing of them.
 */
export function authenticate(header: string | undefined, tokens: readonly ApiToken[]): Caller {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  if (!match) {
    throw new ApiError(
      "unauthenticated",
      "missing bearer token: send Authorization: Bearer <token>",
    );
  }
  const given = digest(match[1] as string);
  let found: ApiToken | undefined;
  for (const token of tokens) if (timingSafeEqual(given, digest(token.token))) found ??= token;
  if (!found) throw new ApiError("unauthenticated", "unknown bearer token");
  return { name: found.name, accounts: found.accounts, permissions: found.permissions };
}

/**
 * The account a request acts on: the one named, which the token must hold, or the token's
 * only account when none is named.
 */
export function accountOf(caller: Caller, named: string | undefined): string {
  const account = namedOrOnlyAccount(caller.accounts, named);
  if (account !== undefined) return account;
  if (named === undefined)
    throw new ApiError("invalid_request", "account: required (this token holds several)", {
      details: [{ field: "account", rule: "required (this token holds several accounts)" }],
    });
  throw new ApiError("forbidden", `this token may not use account "${named}"`);
}

/** Refuses a caller whose token lacks `permission`; `route` names what needed it. */
export function requirePermission(caller: Caller, permission: Permission, route: string): void {
  if (caller.permissions.includes(permission)) return;
  throw new ApiError(
    "forbidden",
    `this token lacks the "${permission}" permission (${route} needs it)`,
    { details: [{ field: "authorization", rule: `token needs the ${permission} permission` }] },
  );
}
