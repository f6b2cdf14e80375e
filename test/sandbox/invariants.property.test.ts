import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TRON_ADDRESS } from "../fixtures/operation-examples.js";
import { call, useSandbox } from "../helpers/sandbox.js";

const sb = useSandbox({ settleDelayMs: 20 });

interface Step {
  readonly kind: "bank" | "momo" | "fund" | "order" | "stable" | "advance";
  readonly key: number;
  readonly amount: number;
  readonly repeat: "once" | "retry" | "burst" | "other-body";
  readonly magic: number;
}

const step = fc.record<Step>({
  kind: fc.constantFrom("bank", "momo", "fund", "order", "stable", "advance"),
  // A small key space, so keys are reused across steps as well as within them.
  key: fc.integer({ min: 0, max: 7 }),
  amount: fc.integer({ min: 1, max: 300_000 }).map((c) => c / 100),
  repeat: fc.constantFrom("once", "retry", "burst", "other-body"),
  magic: fc.integer({ min: 0, max: 9 }),
});

function requestOf(s: Step, subAccountId: string): { path: string; body: unknown } {
  const destination = s.magic < 4 ? `000000000${s.magic + 1}` : "0123456789";
  switch (s.kind) {
    case "bank":
      return {
        path: "/transaction/transfer/bank",
        body: {
          amount: s.amount,
          currency: "NGN",
          bankCode: "044",
          accountNumber: destination,
          accountName: "A",
          bankName: "B",
        },
      };
    case "momo":
      return {
        path: "/transaction/transfer/momo",
        body: {
          amount: s.amount,
          currency: "KES",
          phoneNumber: destination,
          network: "MPESA",
          iso2: "KE",
        },
      };
    case "fund":
      return {
        path: "/transaction/fund-wallet",
        body: { amount: s.amount, currency: "NGN", paymentMethod: "CARD" },
      };
    case "order":
      return {
        path: "/offer/offer_usd_ngn/order",
        body: {
          amount: Math.max(10, s.amount % 2_000),
          buyerDebitPaymentMethod: "WALLET",
          buyerCreditPaymentMethod: "WALLET",
        },
      };
    default:
      return {
        path: `/stable-currency/sub-accounts/${subAccountId}/withdraw`,
        body: {
          amount: s.amount.toFixed(2),
          toAddress: TRON_ADDRESS,
          currency: "USDT",
          network: "base",
        },
      };
  }
}

describe("sandbox invariants under random operations and retries", () => {
  it("hold after every sequence: no negative balance, balances equal entries, one effect per key", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 20 }), async (steps) => {
        run += 1;
        const account = await sb.newAccount({
          balances: { NGN: 20_000, KES: 20_000, USD: 5_000 },
          faults: {
            latencyMs: 1,
            latencyJitterMs: 6,
            errorRate: 0.1,
            dropAfterCommitRate: 0.15,
            seed: run,
          },
        });
        const info = (await sb.control("GET", "/accounts")).body.data.accounts.find(
          (a: { accountId: string }) => a.accountId === account.accountId,
        );
        const subAccountId = info.subAccountIds[0];
        for (const s of steps) {
          if (s.kind === "advance") {
            await sb.advance(s.amount * 10);
            continue;
          }
          const { path, body } = requestOf(s, subAccountId);
          const send = (b: unknown) =>
            call(`${sb.sandbox.baseUrl}${path}`, "POST", {
              key: account.apiKey,
              idem: `k${s.key}`,
              body: b,
            }).catch(() => null);
          if (s.repeat === "burst") await Promise.all([send(body), send(body), send(body)]);
          else await send(body);
          if (s.repeat === "retry") await send(body);
          if (s.repeat === "other-body")
            await send({
              ...(body as object),
              amount: typeof (body as { amount: unknown }).amount === "string" ? "1.00" : 1,
            });
        }
        const { ok, violations } = (
          await sb.control("GET", "/invariants", { query: { accountId: account.accountId } })
        ).body.data;
        expect(violations).toEqual([]);
        expect(ok).toBe(true);
      }),
      { numRuns: 40, seed: 20261121 },
    );
    expect((await sb.control("GET", "/invariants")).body.data).toEqual({
      ok: true,
      violations: [],
    });
  });
});
