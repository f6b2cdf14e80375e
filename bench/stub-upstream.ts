// Child process of bench/pipeline.bench.ts: a stub Payments API that answers every request at
// once (or after DELAY_MS) with a SUCCESSFUL transaction, and prints its base URL. GET /cpu
// answers the CPU time the stub has used. It is also an OTLP receiver that discards what it
// gets (POST /v1/traces, protobuf), counting the spans: GET /spans answers how many so far.
import { createServer } from "node:http";

const delayMs = Number(process.argv[2] ?? 0);
let n = 0;
let spans = 0;

/** The length-delimited fields `field` of a protobuf message (no other wire type is needed). */
function fields(message: Buffer, field: number): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  const varint = () => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = message[at++] as number;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
  };
  while (at < message.length) {
    const key = varint();
    const wire = key & 7;
    if (wire === 2) {
      const length = varint();
      if (key >>> 3 === field) out.push(message.subarray(at, at + length));
      at += length;
    } else if (wire === 0) varint();
    else at += wire === 1 ? 8 : 4;
  }
  return out;
}

/** Spans in an ExportTraceServiceRequest: resource_spans (1), scope_spans (2), spans (2). */
const spansIn = (request: Buffer) =>
  fields(request, 1)
    .flatMap((resourceSpans) => fields(resourceSpans, 2))
    .reduce((sum, scopeSpans) => sum + fields(scopeSpans, 2).length, 0);

const server = createServer((req, res) => {
  // The benchmark reads the stub's own CPU time here, to count it per job.
  if (req.url === "/cpu") {
    const used = process.cpuUsage();
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ cpuUs: used.user + used.system }));
    return;
  }
  if (req.url === "/spans") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ spans }));
    return;
  }
  if (req.url === "/v1/traces") {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      spans += spansIn(Buffer.concat(chunks));
      res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
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
