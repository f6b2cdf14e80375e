// Child process of bench/lanes.bench.ts and bench/latency.bench.ts: the sandbox, whose payouts answer PENDING and settle
// after argv[2] ms; prints one JSON line with its addresses and key.
import { startSandbox } from "../src/sandbox/index.js";

const sandbox = await startSandbox({ settleDelayMs: Number(process.argv[2] ?? 20) });
process.stdout.write(
  `${JSON.stringify({ baseUrl: sandbox.baseUrl, controlUrl: sandbox.controlUrl, apiKey: sandbox.apiKey })}\n`,
);
