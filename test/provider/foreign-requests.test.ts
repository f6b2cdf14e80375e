import { afterAll, describe, expect, it } from "vitest";
import { PaymentsValidationError } from "../../src/client/errors.js";
import { PaymentsClient } from "../../src/client/payments-client.js";
import { operationExamples as ex } from "../fixtures/operation-examples.js";
import { FOREIGN_PROFILE } from "../fixtures/provider-profiles.js";
import { useSandbox } from "../helpers/sandbox.js";

// The names the spec leaves unshown, sent as the provider of the profile expects them.
const sb = useSandbox({ profile: FOREIGN_PROFILE, settleDelayMs: 10_000 });
const clients: PaymentsClient[] = [];
const clientWith = (profile = FOREIGN_PROFILE) => {
  const c = new PaymentsClient({ baseUrl: sb.sandbox.baseUrl, apiKey: sb.sandbox.apiKey, profile });
  clients.push(c);
  return c;
};
afterAll(() => Promise.all(clients.map((c) => c.close())));

const lastRequest = async () => {
  const all = (await sb.control("GET", "/requests")).body.data.requests;
  return all[all.length - 1] as { method: string; path: string };
};

describe("requests in another provider's names", () => {
  it("4.11: filters the transaction list by the provider's parameter names", async () => {
    const client = clientWith();
    await client.withdrawToBank({ ...ex.withdrawToBank, idempotencyKey: "names-1" });
    // biome-ignore lint/suspicious/noExplicitAny: the provider's shape, read field by field.
    const list: any = await client.listTransactions({
      query: { status: "PENDING", sortDirection: "desc" },
    });
    expect((await lastRequest()).path).toBe("/v1/transactions?state=PENDING&order=desc");
    expect(list.page.items.length).toBeGreaterThan(0);
    expect(list.page.items.every((t: { state: string }) => t.state === "pending")).toBe(true);
  });

  it("4.13 and 4.9: pages and rates by the provider's names", async () => {
    const client = clientWith();
    // biome-ignore lint/suspicious/noExplicitAny: the provider's shape, read field by field.
    const page: any = await client.listStableTransactions({ query: { page: 1, pageSize: 5 } });
    expect((await lastRequest()).path).toBe(
      "/v1/stable-currency/transactions?pageNumber=1&limit=5",
    );
    expect(page.pageSize).toBe(5);
    // biome-ignore lint/suspicious/noExplicitAny: the provider's shape, read field by field.
    const rate: any = await client.getPaymentLinkRate(ex.getPaymentLinkRate);
    expect((await lastRequest()).path).toContain("from=USD&to=NGN&fromCountry=");
    expect(rate.quote.rate).toBeGreaterThan(0);
  });

  it("4.4, 4.6, 4.8: body names, the unit of validFor, the link in the body", async () => {
    const client = clientWith();
    const demo = (await sb.control("GET", "/accounts")).body.data.accounts[0];
    // biome-ignore lint/suspicious/noExplicitAny: the provider's shape, read field by field.
    const stable: any = await client.withdrawStable({
      ...ex.withdrawStable,
      params: { subAccountId: demo.subAccountIds[0] },
    });
    expect(stable.state).toBe("PROCESSING");
    // 30 minutes, sent as 1800 seconds: the sandbox (in minutes) gives it 30 minutes.
    // biome-ignore lint/suspicious/noExplicitAny: the provider's shape, read field by field.
    const va: any = await client.createVirtualAccount({ body: { amount: 100, validFor: 30 } });
    expect(va.expiresAt - va.createdAt).toBe(30 * 60);
    const link = await sb.control("POST", "/payment-links", {
      body: { accountId: demo.accountId, offerId: "offer_usd_ngn" },
    });
    // biome-ignore lint/suspicious/noExplicitAny: the provider's shape, read field by field.
    const declined: any = await client.declinePaymentLink({
      query: { token: link.body.data.token },
      body: { reason: "not mine" },
    });
    expect((await lastRequest()).path).toBe("/v1/payment-link/decline");
    expect(declined.status).toBe("DECLINED");
    expect(link.body.data.token).toBe(declined.token);
  });

  it("our own names are refused by that provider: the profile is what makes them fit", async () => {
    const ours = new PaymentsClient({ baseUrl: sb.sandbox.baseUrl, apiKey: sb.sandbox.apiKey });
    clients.push(ours);
    const error = await ours
      .listTransactions({ query: { status: "PENDING" } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaymentsValidationError);
    expect((error as Error).message).toContain("status: unknown field");
    const stable = await ours
      .withdrawStable({
        ...ex.withdrawStable,
        idempotencyKey: "ours-1",
        params: { subAccountId: "sub_000001" },
      })
      .catch((e: unknown) => e);
    expect((stable as Error).message).toContain("currency: unknown field");
  });
});
