import type { ApiRouter, RouteSpec } from "./api-app.js";
import { accountOf, type Caller } from "./auth.js";

/**
 * A GET (so needing `read`) on one of the caller's accounts, named by `?account=` (the
 * caller's only account when the query names none; 400 or 404 from `accountOf` otherwise).
 * The handler gets that account.
 */
export function addAccountQueryRoute<Q extends { account?: string }>(
  router: ApiRouter,
  spec: Required<Pick<RouteSpec, "url" | "summary" | "query">>,
  handler: (account: string, query: Q, caller: Caller) => Promise<unknown>,
): void {
  router.add<undefined, Q>(
    {
      method: "GET",
      url: spec.url,
      summary: spec.summary,
      auth: true,
      permission: "read",
      query: spec.query,
    },
    async ({ caller, query }) => handler(accountOf(caller, query.account), query, caller),
  );
}
