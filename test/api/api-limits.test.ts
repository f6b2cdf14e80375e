import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { ALPHA_TOKEN, bankJob, useLoggedService } from "../helpers/logged-service.js";
import { rawRequest } from "../helpers/raw-http.js";

const h = useLoggedService({
  MONEYQ_API_REQUEST_TIMEOUT_MS: "1500",
  MONEYQ_API_HEADERS_TIMEOUT_MS: "1000",
  MONEYQ_API_IDLE_TIMEOUT_MS: "3000",
});

const MB = 1024 * 1024;
const json = { "content-type": "application/json" };
const auth = { authorization: `Bearer ${ALPHA_TOKEN}` };

/** Heap growth of this process (which runs the service) while `run` runs, in MB. */
async function heapGrowthMb<T>(run: () => Promise<T>): Promise<{ value: T; mb: number }> {
  global.gc?.();
  const before = process.memoryUsage().heapUsed;
  const value = await run();
  const mb = (process.memoryUsage().heapUsed - before) / MB;
  return { value, mb };
}

describe("the API refuses before it reads", () => {
  it("answers 401 to a 60 MB body without a token before the body has arrived", async () => {
    for (const path of ["/v1/jobs", "/v1/batches"]) {
      const { value: answer, mb } = await heapGrowthMb(() =>
        rawRequest(h.url(), {
          method: "POST",
          path,
          headers: json,
          total: 60 * MB,
          chunk: 64 * 1024,
          everyMs: 0,
          limitMs: 20_000,
        }),
      );
      expect(answer.status).toBe(401);
      expect(answer.body.error.code).toBe("unauthenticated");
      // Sent: what socket buffers took before the answer, far from the whole body.
      expect(answer.sent).toBeLessThan(20 * MB);
      expect(mb).toBeLessThan(40);
    }
  });

  it("answers 401 at once to a crawling body without a token", async () => {
    const answer = await rawRequest(h.url(), {
      method: "POST",
      path: "/v1/jobs",
      headers: json,
      total: 4000,
      chunk: 10,
      everyMs: 200,
      limitMs: 30_000,
    });
    expect(answer.status).toBe(401);
    // The whole body would have taken 80 s; the answer came long before it.
    expect(answer.sent).toBeLessThan(1000);
    expect(answer.ms).toBeLessThan(10_000);
  });

  it("closes a crawling body with a token after the request timeout, in moneyq's shape", async () => {
    const answer = await rawRequest(h.url(), {
      method: "POST",
      path: "/v1/jobs",
      headers: { ...json, ...auth },
      total: 4000,
      chunk: 10,
      everyMs: 200,
      limitMs: 30_000,
    });
    expect(answer.status).toBe(408);
    expect(answer.body.error.code).toBe("request_timeout");
    expect(answer.sent).toBeLessThan(4000);
    expect(answer.ms).toBeLessThan(15_000);
  });

  it("closes a connection whose headers crawl", async () => {
    const started = Date.now();
    const closed = await new Promise<string>((resolve) => {
      const { hostname, port } = new URL(h.url());
      const socket = connect({ host: hostname, port: Number(port) });
      let received = "";
      let timer: NodeJS.Timeout | undefined;
      socket.on("data", (d) => {
        received += d.toString();
      });
      socket.on("close", () => {
        clearInterval(timer);
        resolve(received);
      });
      socket.on("error", () => undefined);
      socket.on("connect", () => {
        socket.write("GET /v1/accounts HTTP/1.1\r\nhost: x\r\n");
        timer = setInterval(() => socket.write("x"), 200);
      });
      setTimeout(() => socket.destroy(), 30_000);
    });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(closed).toMatch(/^HTTP\/1\.1 408/);
  });

  it("closes a connection that sends nothing", async () => {
    const started = Date.now();
    let answer = "";
    await new Promise<void>((resolve) => {
      const { hostname, port } = new URL(h.url());
      const socket = connect({ host: hostname, port: Number(port) });
      socket.on("data", (d) => {
        answer += d.toString();
      });
      socket.on("error", () => undefined);
      socket.on("close", () => resolve());
      setTimeout(() => socket.destroy(), 30_000);
    });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it("a job body is at most 64 KB; a batch may be larger", async () => {
    const { value: answer, mb } = await heapGrowthMb(() =>
      rawRequest(h.url(), {
        method: "POST",
        path: "/v1/jobs",
        headers: { ...json, ...auth },
        total: 60 * MB,
        chunk: 64 * 1024,
        everyMs: 0,
        limitMs: 20_000,
      }),
    );
    expect(answer.status).toBe(413);
    expect(answer.body.error).toMatchObject({
      code: "body_too_large",
      details: [{ field: "body", rule: "at most 65536 bytes" }],
    });
    expect(answer.sent).toBeLessThan(20 * MB);
    expect(mb).toBeLessThan(40);

    const padded = bankJob({ metadata: { note: "x".repeat(70 * 1024) } });
    const big = await h.api("POST", "/v1/jobs", { body: padded });
    expect(big.status).toBe(413);
    // 80 KB of rows: past the job limit, well within the batch limit; refused for its rows only.
    const rows = Array.from({ length: 400 }, (_, i) => ({
      reference: `big-${i}`,
      amount: "x".repeat(200),
    }));
    const batch = await h.api("POST", "/v1/batches", {
      body: { kind: "payout.bank", rows, dryRun: true },
    });
    expect(batch.status).toBe(200);
    expect(batch.body.invalid).toBe(400);
  });

  it("30 uploads dropped mid-body write no error-level line", async () => {
    const errorsBefore = h.lines.filter((l) => l.level >= 50).length;
    const header = "reference,amount,currency,bankCode,accountNumber,accountName,bankName\n";
    for (let i = 0; i < 30; i += 1) {
      await new Promise<void>((resolve) => {
        const { hostname, port } = new URL(h.url());
        const socket = connect({ host: hostname, port: Number(port) });
        socket.on("error", () => undefined);
        socket.on("close", () => resolve());
        socket.on("connect", () => {
          socket.write(
            `POST /v1/batches?kind=payout.bank HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${ALPHA_TOKEN}\r\ncontent-type: text/csv\r\ncontent-length: 1000000\r\n\r\n${header}`,
          );
          for (let n = 0; n < 50; n += 1)
            socket.write(`drop-${i}-${n},10,NGN,044,0123456789,Ada Obi,Access Bank\n`);
          setTimeout(() => socket.destroy(), 50);
        });
      });
    }
    // The server notices each close a moment later.
    await new Promise((r) => setTimeout(r, 500));
    const errors = h.lines.filter((l) => l.level >= 50).slice(errorsBefore);
    expect(errors).toEqual([]);
    const accounts = await h.api("GET", "/v1/accounts");
    expect(accounts.status).toBe(200);
  });
});
