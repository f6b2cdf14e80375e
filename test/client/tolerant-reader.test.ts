import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PaymentsRefusedError, PaymentsResponseError } from "../../src/client/errors.js";
import { PaymentsClient } from "../../src/client/payments-client.js";
import { type ScriptedServer, startScriptedServer } from "../helpers/scripted-server.js";

let server: ScriptedServer;
let client: PaymentsClient;
beforeAll(async () => {
  server = await startScriptedServer();
  client = new PaymentsClient({ baseUrl: server.baseUrl, apiKey: "sk_tolerant_key" });
});
afterAll(async () => {
  await client.close();
  await server.close();
});

const lookUp = () => client.getTransaction({ params: { transactionId: "t1" } });

describe("a 2xx is checked only for the spec's envelope", () => {
  it("returns data as received: other fields, other types, fields missing", async () => {
    const data = {
      id: 7,
      state: "successful",
      amount: "1500.00",
      createdAt: 1767225600,
      extra: {},
    };
    server.reply({ status: 200, body: { success: true, message: "ok", data } });
    expect(await lookUp()).toEqual(data);
  });

  it("returns an empty data when the provider leaves it out, and the message with send()", async () => {
    server.reply({ status: 200, body: { success: true, message: "accepted", extra: 1 } });
    expect(await lookUp()).toEqual({});
    expect(await client.send("getTransaction", { params: { transactionId: "t1" } })).toEqual({
      message: "accepted",
      data: {},
    });
  });

  it.each([
    ["no message", { success: true, data: {} }],
    ["success false without a message", { success: false }],
    ["data not an object", { success: true, message: "ok", data: "t1" }],
    ["data an array", { success: true, message: "ok", data: [] }],
  ])("refuses what is not the envelope: %s", async (_name, body) => {
    server.reply({ status: 200, body });
    await expect(lookUp()).rejects.toBeInstanceOf(PaymentsResponseError);
  });

  it("reads a 200 carrying the error envelope as the provider's refusal, with its message", async () => {
    server.reply({ status: 200, body: { success: false, message: "Insufficient balance" } });
    const error = await lookUp().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaymentsRefusedError);
    expect(error).toMatchObject({ code: "refused", status: 200 });
    expect((error as Error).message).toBe("getTransaction: Insufficient balance");
  });
});
