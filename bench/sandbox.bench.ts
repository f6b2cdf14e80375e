// The sandbox's throughput against a bare fastify route measured in the same run.
// Run: npm run bench -- sandbox. Figures go to docs/performance.md.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { type LoadRequest, runLoad } from "./load.js";

const SECONDS = Number(process.argv[2] ?? 5);
const CONCURRENCY = 64;

async function startServer(
  mode: "baseline" | "sandbox",
): Promise<{ child: ChildProcess; baseUrl: string; apiKey: string }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(import.meta.dirname, "sandbox-server.ts"), mode],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const line = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
      if (out.includes("\n")) resolve(out);
    });
    child.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
  });
  return { child, ...JSON.parse(line) };
}

async function measure(mode: "baseline" | "sandbox", build: (apiKey: string) => LoadRequest) {
  const server = await startServer(mode);
  try {
    // Warm-up, then the measured run.
    await runLoad(server.baseUrl, build(server.apiKey), 1, CONCURRENCY);
    return await runLoad(server.baseUrl, build(server.apiKey), SECONDS, CONCURRENCY);
  } finally {
    server.child.kill("SIGTERM");
  }
}

const listOrders = (apiKey: string): LoadRequest => ({
  method: "GET",
  path: "/order/my-orders",
  headers: { "x-api-key": apiKey },
});
const rate = (apiKey: string): LoadRequest => ({
  method: "GET",
  path: "/utility/exchange-rate?fromCurrency=USD&toCurrency=NGN&fromCurrencyIso2=USAA&toCurrencyIso2=NGAA&amount=100",
  headers: { "x-api-key": apiKey },
});
const payout = (apiKey: string): LoadRequest => ({
  method: "POST",
  path: "/transaction/transfer/bank",
  headers: { "x-api-key": apiKey, "content-type": "application/json", idempotencykey: "" },
  body: () =>
    JSON.stringify({
      amount: 1,
      currency: "NGN",
      bankCode: "044",
      accountNumber: "0123456789",
      accountName: "A",
      bankName: "B",
    }),
});
// Each payout needs its own key: the header is set per request below.
let seq = 0;
const payoutWithKeys = (apiKey: string): LoadRequest => {
  const base = payout(apiKey);
  return {
    ...base,
    get headers() {
      seq += 1;
      return { ...base.headers, idempotencykey: `bench-${seq}` };
    },
  };
};

const baseline = await measure("baseline", listOrders);
const rows = [
  ["bare fastify route (baseline)", baseline],
  ["sandbox GET /order/my-orders", await measure("sandbox", listOrders)],
  ["sandbox GET /utility/exchange-rate", await measure("sandbox", rate)],
  [
    "sandbox POST /transaction/transfer/bank (new key each)",
    await measure("sandbox", payoutWithKeys),
  ],
] as const;

console.log(
  `sandbox throughput, ${SECONDS} s per row, ${CONCURRENCY} connections, node ${process.version}`,
);
console.log("| workload | requests/s | ratio to baseline | non-2xx |");
console.log("|---|---|---|---|");
for (const [name, r] of rows) {
  console.log(
    `| ${name} | ${Math.round(r.perSecond)} | ${(r.perSecond / baseline.perSecond).toFixed(2)} | ${r.non2xx} |`,
  );
}
