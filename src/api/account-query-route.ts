import type { z } from "zod";
import type { ApiRouter } from "./api-app.js";
import { accountOf, type Caller } from "./auth.js";

/**
 * A GET (so needing `read`) on one of the caller's accounts, named by `?account=` (the
 * caller's only account when the query names none; 400 or 404 from `accountOf` otherwise).
 * The handler gets that account.
 */
export function addAccountQueryRoute<S extends z.ZodType<{ account?: string | undefined }>>(
  router: ApiRouter,
  spec: { readonly url: string; readonly summary: string; readonly query: S },
  handler: (account: string, query: z.output<S>, caller: Caller) => Promise<unknown>,
): void {
  router.add(
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
