// Child process of bench/pipeline.bench.ts: a stub Payments API that answers every request at
// once (or after DELAY_MS) with a SUCCESSFUL transaction, and prints its base URL. GET /cpu
// answers the CPU time the stub has used.
import { createServer } from "node:http";

const delayMs = Number(process.argv[2] ?? 0);
let n = 0;
const server = createServer((req, res) => {
  // The benchmark reads the stub's own CPU time here, to count it per job.
  if (req.url === "/cpu") {
    const used = process.cpuUsage();
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ cpuUs: used.user + used.system }));
    return;
  }
  req.resume();
  req.on("end", () => {
    n += 1;
    const at = "2026-11-21T00:00:00.000Z";
    const body = JSON.stringify({
      success: true,
      message: "ok",
      data: {
        transactionId: `txn_${n}`,
        type: "DEBIT",
        status: "SUCCESSFUL",
        channel: "bank",
        amount: 1,
        fee: 0,
        currency: "NGN",
        createdAt: at,
        updatedAt: at,
      },
    });
    const send = () => res.writeHead(200, { "content-type": "application/json" }).end(body);
    if (delayMs > 0) setTimeout(send, delayMs);
    else send();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ baseUrl: `http://127.0.0.1:${port}/v1` })}\n`);
});
