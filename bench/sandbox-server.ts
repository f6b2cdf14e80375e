// Child process of bench/sandbox.bench.ts: serves either a bare fastify route (the baseline)
// or the sandbox, and prints one JSON line with its address.
import Fastify from "fastify";
import { startSandbox } from "../src/sandbox/index.js";

const mode = process.argv[2];
if (mode === "baseline") {
  const app = Fastify({ logger: false });
  app.get("/v1/order/my-orders", async () => ({
    success: true,
    message: "ok",
    data: { orders: [] },
  }));
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  process.stdout.write(
    `${JSON.stringify({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: "none" })}\n`,
  );
} else {
  const sandbox = await startSandbox({ settleDelayMs: 100 });
  process.stdout.write(`${JSON.stringify({ baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey })}\n`);
}
