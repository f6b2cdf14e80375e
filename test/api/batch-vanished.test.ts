import { describe, expect, it } from "vitest";
import type { Batches } from "../../src/batches/batches.js";
import { batchKeys, keyspace } from "../../src/redis/keys.js";
import { ALPHA_TOKEN, bankCsv, useService } from "../helpers/service.js";
import { serviceApi } from "../helpers/service-api.js";

// A batch can vanish between the lookup that finds it and its use: a refused submission
// deletes the meta it wrote. That is a 404, never a 500 or a broken results stream.
const h = useService();

describe("a batch that vanishes after its lookup", () => {
  it("answers 404 not_found for its status and its results", async () => {
    const prefix = h.config().redisPrefix;
    const service = h.service();
    const submitted = await h.api("POST", "/v1/batches?kind=payout.bank&batchId=vanishing", {
      csv: bankCsv("vanishing", 1),
    });
    expect(submitted.status).toBe(202);
    const keys = batchKeys(keyspace(prefix), "alpha", "vanishing");
    // The lookup finds the batch; then its meta is deleted, as a refused submission does.
    const vanishing = new Proxy(service.batches, {
      get(target, property) {
        if (property === "accountOf")
          return async (batchId: string, accounts: readonly string[]) => {
            const found = await target.accountOf(batchId, accounts);
            await h.redis().del(keys.meta);
            return found;
          };
        const value = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }) as Batches;
    const api = serviceApi(h, { batches: vanishing });
    try {
      for (const url of ["/v1/batches/vanishing", "/v1/batches/vanishing/results?format=jsonl"]) {
        const answer = await api.router.app.inject({
          method: "GET",
          url,
          headers: { authorization: `Bearer ${ALPHA_TOKEN}` },
        });
        expect(answer.statusCode, url).toBe(404);
        expect(answer.json().error, url).toMatchObject({
          code: "not_found",
          message: "batch vanishing not found",
        });
      }
    } finally {
      await api.close();
      await h.api("POST", "/v1/batches/vanishing/cancel");
    }
  });
});
