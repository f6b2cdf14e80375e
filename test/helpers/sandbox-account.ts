import type { CallOptions, HttpAnswer, TestSandbox } from "./sandbox.js";

/** A bank payout body (4.1) in NGN; magic account numbers force outcomes (docs/sandbox.md). */
export const bankPayout = (amount: number, accountNumber = "0123456789") => ({
  amount,
  currency: "NGN",
  bankCode: "044",
  accountNumber,
  accountName: "Ada Obi",
  bankName: "Access Bank",
});

export interface SandboxAccount {
  readonly accountId: string;
  readonly apiKey: string;
  /** The Payments API as this account. */
  api(method: string, path: string, options?: CallOptions): Promise<HttpAnswer>;
  /** A bank payout under a fresh key; answers the transaction. */
  pay(amount: number, accountNumber?: string): Promise<Record<string, unknown>>;
  /** A transaction as a lookup (4.12) shows it: its data, or the error answer's status. */
  lookUp(transactionId: string): Promise<HttpAnswer>;
  /** The account's transactions (4.11), with a query. */
  list(query?: Record<string, string>): Promise<Record<string, unknown>[]>;
  wallet(currency: string): Promise<{ availableBalance: number; heldBalance: number }>;
}

let keys = 0;

/** A fresh account on `sb` with the given fiat balances. */
export async function sandboxAccount(
  sb: TestSandbox,
  balances: Record<string, number> = { NGN: 100_000, USD: 10_000 },
): Promise<SandboxAccount> {
  const { accountId, apiKey } = await sb.newAccount({ balances });
  const api: SandboxAccount["api"] = (method, path, o = {}) =>
    sb.api(method, path, { key: apiKey, ...o });
  return {
    accountId,
    apiKey,
    api,
    async pay(amount, accountNumber) {
      keys += 1;
      const res = await api("POST", "/transaction/transfer/bank", {
        idem: `books-${accountId}-${keys}`,
        body: bankPayout(amount, accountNumber),
      });
      if (res.status !== 200) throw new Error(`pay: ${JSON.stringify(res.body)}`);
      return res.body.data;
    },
    lookUp: (transactionId) => api("GET", `/transactions/${transactionId}`),
    async list(query = {}) {
      const res = await api("GET", "/transactions", { query });
      if (res.status !== 200) throw new Error(`list: ${JSON.stringify(res.body)}`);
      return res.body.data.transactions;
    },
    wallet: (currency) => sb.wallet(accountId, currency),
  };
}
