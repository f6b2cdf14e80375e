import { describe, expect, it } from "vitest";
import { useSandbox } from "../helpers/sandbox.js";

const payout = {
  amount: 10,
  currency: "NGN",
  bankCode: "044",
  accountNumber: "0123456789",
  accountName: "Ada Obi",
  bankName: "Access Bank",
};

describe("a sandbox that refuses repeated idempotency keys", () => {
  const sb = useSandbox({ rejectRepeatedKeys: true });

  it("answers the first send and refuses the same key again with a 400", async () => {
    const first = await sb.api("POST", "/transaction/transfer/bank", {
      idem: "rk-1",
      body: payout,
    });
    expect(first.status).toBe(200);
    const again = await sb.api("POST", "/transaction/transfer/bank", {
      idem: "rk-1",
      body: payout,
    });
    expect(again.status).toBe(400);
    expect(again.headers["idempotent-replayed"]).toBeUndefined();
  });
});

describe("a spec-minimal sandbox's errors", () => {
  const sb = useSandbox({ specMinimal: true });

  it("carry only success and message, as spec 2.1 shows", async () => {
    const refused = await sb.api("POST", "/transaction/transfer/bank", { idem: "sm-1", body: {} });
    expect(refused.status).toBe(400);
    expect(Object.keys(refused.body).sort()).toEqual(["message", "success"]);
    const unknown = await sb.api("GET", "/no-such-route");
    expect(Object.keys(unknown.body).sort()).toEqual(["message", "success"]);
  });
});
