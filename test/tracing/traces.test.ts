import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { deriveIdempotencyKey, jobIdFor } from "../../src/queues/idempotency-key.js";
import { keyspace, resultMarkerKey } from "../../src/redis/keys.js";
import { ATTR, SPAN } from "../../src/tracing/job-spans.js";
import { useOtlpReceiver } from "../helpers/otlp-receiver.js";
import { useTestRedis } from "../helpers/redis.js";
import { useSandboxProcess } from "../helpers/sandbox-process.js";
import { startServiceProcess } from "../helpers/service-process.js";
import { waitUntil } from "../helpers/wait-until.js";

// What must never leave in a span, planted in the job and the configuration.
const API_KEY = `sk_sandbox_CANARY_${randomUUID().slice(0, 8)}`;
const IDEMPOTENCY_KEY = `idem-CANARY-${randomUUID()}`;
const ACCOUNT_NUMBER = "3141592653";
const ACCOUNT_NAME = "Canary Oyelaran";
const OTLP_SECRET = `otlp-CANARY-${randomUUID().slice(0, 8)}`;
const API_TOKEN = `tok_${randomUUID().replace(/-/g, "")}`;

interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  readonly scope: string;
  readonly attributes: Record<string, string | number | boolean>;
  readonly links: { traceId: string; spanId: string }[];
}

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean };

/** Every span of every export body (OTLP/HTTP JSON). */
function spansOf(bodies: readonly string[]): ReceivedSpan[] {
  return bodies.flatMap((body) =>
    JSON.parse(body).resourceSpans.flatMap(
      // biome-ignore lint/suspicious/noExplicitAny: the OTLP JSON is read field by field.
      (rs: any) =>
        // biome-ignore lint/suspicious/noExplicitAny: as above.
        rs.scopeSpans.flatMap((ss: any) =>
          // biome-ignore lint/suspicious/noExplicitAny: as above.
          ss.spans.map((s: any) => ({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? "",
            name: s.name,
            kind: s.kind,
            scope: ss.scope.name,
            attributes: Object.fromEntries(
              (s.attributes ?? []).map((a: { key: string; value: OtlpValue }) => [
                a.key,
                a.value.stringValue ?? a.value.boolValue ?? Number(a.value.intValue),
              ]),
            ),
            links: s.links ?? [],
          })),
        ),
    ),
  );
}

/** A secret in the forms it could be carried in: as is, percent-encoded, base64, hex. */
const encodings = (secret: string) => [
  secret,
  encodeURIComponent(secret),
  Buffer.from(secret).toString("base64"),
  Buffer.from(secret).toString("base64url"),
  Buffer.from(secret).toString("hex"),
];

const redis = useTestRedis("trace");
const sandbox = useSandboxProcess(["--settle-delay-ms", "50"]);
const receiver = useOtlpReceiver();

describe("traces (OTEL_EXPORTER_OTLP_ENDPOINT set)", () => {
  it("one trace per job: request, enqueue, wait, attempts with gate, call and lookup, result; nothing secret", async () => {
    await sandbox.addAccount("acct_trace", API_KEY);
    const service = await startServiceProcess({
      REDIS_URL: redis.url,
      MONEYQ_REDIS_PREFIX: redis.prefix,
      PAYMENTS_API_URL: sandbox.baseUrl,
      PAYMENTS_API_KEY: API_KEY,
      MONEYQ_CONFIRM_FIRST_DELAY_MS: "100",
      MONEYQ_API_TOKENS: JSON.stringify([
        { name: "tester", token: API_TOKEN, accounts: ["default"] },
      ]),
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${OTLP_SECRET}`,
      OTEL_SERVICE_NAME: "moneyq-trace-test",
    });
    const post = (path: string, body: unknown) =>
      fetch(`${service.apiUrl}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${API_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const bankBody = {
      amount: 10,
      currency: "NGN",
      bankCode: "044",
      accountNumber: ACCOUNT_NUMBER,
      accountName: ACCOUNT_NAME,
      bankName: "Access Bank",
    };
    const enqueued = await post("/v1/jobs", {
      kind: "payout.bank",
      account: "default",
      idempotencyKey: IDEMPOTENCY_KEY,
      request: { body: bankBody },
    });
    expect(enqueued.status).toBe(202);
    const { jobId } = (await enqueued.json()) as { jobId: string };
    const batchId = `b-${randomUUID().slice(0, 8)}`;
    const rows = ["row-1", "row-2"].map((reference) => ({
      reference,
      ...bankBody,
      amount: "10",
    }));
    const submitted = await post("/v1/batches", { kind: "payout.bank", batchId, rows });
    expect(submitted.status).toBe(202);
    const rowJobIds = rows.map((r) =>
      jobIdFor("default", deriveIdempotencyKey("default", batchId, r.reference)),
    );
    const admin = redis.connect();
    for (const id of [jobId, ...rowJobIds])
      await waitUntil(
        async () =>
          (await admin.get(resultMarkerKey(keyspace(redis.prefix), "default", id))) !== null,
        20_000,
        `the result of ${id}`,
      );
    expect(
      JSON.parse((await admin.get(resultMarkerKey(keyspace(redis.prefix), "default", jobId))) ?? "")
        .result,
    ).toBe("succeeded");
    expect(await service.stop()).toBe(0);

    const spans = spansOf(receiver.bodies);
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const parentOf = (s: ReceivedSpan) => byId.get(s.parentSpanId);
    const ofJob = (id: string) =>
      spans.filter((s) => s.attributes[ATTR.jobId] === id || s.attributes["bullmq.job.id"] === id);

    // One trace holds the job: the API request that enqueued it is its root.
    const mine = ofJob(jobId);
    const traceId = mine[0]?.traceId;
    expect(new Set(mine.map((s) => s.traceId))).toEqual(new Set([traceId]));
    const trace = spans.filter((s) => s.traceId === traceId);
    const request = trace.find((s) => s.parentSpanId === "");
    expect(request).toMatchObject({ name: "request", scope: "@fastify/otel" });
    expect(request?.attributes["http.route"]).toBe("/v1/jobs");

    const named = (name: string) => trace.filter((s) => s.name === name);
    const [enqueue] = named(SPAN.enqueue);
    const [wait] = named(SPAN.queueWait);
    const attempts = trace.filter((s) => s.name === "process payments-default");
    expect(enqueue && parentOf(enqueue)?.spanId).toBe(request?.spanId);
    expect(wait?.parentSpanId).toBe(enqueue?.spanId);
    // The payout answered PENDING: a first run submits, a second looks it up and finishes.
    expect(attempts).toHaveLength(2);
    for (const attempt of attempts) expect(attempt.parentSpanId).toBe(enqueue?.spanId);
    const [submit, confirm] = [...attempts]
      .sort((a, b) =>
        String(a.attributes[ATTR.phase]).localeCompare(String(b.attributes[ATTR.phase])),
      )
      .reverse();
    expect(submit?.attributes[ATTR.phase]).toBe("submit");
    expect(submit?.attributes[ATTR.action]).toBe("confirm");
    expect(confirm?.attributes[ATTR.phase]).toBe("confirm");
    expect(confirm?.attributes[ATTR.action]).toBe("succeed");
    const childrenOf = (parent: ReceivedSpan | undefined) =>
      trace
        .filter((s) => s.parentSpanId === parent?.spanId)
        .map((s) => s.name)
        .sort();
    expect(childrenOf(submit)).toEqual(["POST", SPAN.rateGate].sort());
    expect(childrenOf(confirm)).toEqual(
      expect.arrayContaining([SPAN.rateGate, SPAN.lookup, SPAN.result]),
    );
    const [lookup] = named(SPAN.lookup);
    expect(childrenOf(lookup)).toEqual(["GET"]);
    expect(lookup?.attributes[ATTR.lookupOutcome]).toBe("succeeded");
    const [result] = named(SPAN.result);
    expect(result?.attributes[ATTR.result]).toBe("succeeded");
    for (const gate of named(SPAN.rateGate)) expect(gate.attributes[ATTR.gateAnswer]).toBe("send");

    // The upstream calls say their operation's template, never the ids or query they carried.
    const post_ = trace.find((s) => s.name === "POST");
    expect(post_?.attributes["url.full"]).toBe(`${sandbox.baseUrl}/transaction/transfer/bank`);
    const get = trace.find((s) => s.name === "GET");
    expect(get?.attributes["url.full"]).toBe(`${sandbox.baseUrl}/transactions/{transactionId}`);
    expect(get?.attributes["url.query"]).toBeUndefined();

    // Every moneyq span and every attempt says which job, kind, account and attempt it is.
    for (const span of [...trace.filter((s) => s.scope === "moneyq"), ...attempts]) {
      expect(span.attributes[ATTR.jobId], span.name).toBe(jobId);
      expect(span.attributes[ATTR.kind], span.name).toBe("payout.bank");
      expect(span.attributes[ATTR.account], span.name).toBe("default");
      expect(span.attributes[ATTR.attempt], span.name).toBe(span === enqueue ? 0 : 1);
    }

    // Each batch row is a small trace of its own, linked to the submission's request.
    const submission = spans.find(
      (s) => s.name === "request" && s.attributes["http.route"] === "/v1/batches",
    );
    const rowEnqueues = rowJobIds.map((id) =>
      spans.find((s) => s.name === SPAN.enqueue && s.attributes[ATTR.jobId] === id),
    );
    expect(new Set(rowEnqueues.map((s) => s?.traceId)).size).toBe(2);
    for (const [i, row] of rowEnqueues.entries()) {
      expect(row?.parentSpanId).toBe("");
      expect(row?.traceId).not.toBe(submission?.traceId);
      expect(row?.links.map((l) => l.traceId)).toEqual([submission?.traceId]);
      const rowSpans = ofJob(rowJobIds[i] as string);
      expect(new Set(rowSpans.map((s) => s.traceId))).toEqual(new Set([row?.traceId]));
      expect(rowSpans.map((s) => s.name)).toEqual(expect.arrayContaining([SPAN.result]));
    }

    // The exports carried the configured headers, and nothing secret is in any body.
    expect(receiver.headers.every((h) => h.authorization === `Bearer ${OTLP_SECRET}`)).toBe(true);
    const raw = receiver.bodies.join("\n");
    expect(raw).toContain("moneyq-trace-test");
    for (const secret of [API_KEY, IDEMPOTENCY_KEY, ACCOUNT_NUMBER, ACCOUNT_NAME, OTLP_SECRET])
      for (const form of encodings(secret)) expect(raw, secret).not.toContain(form);

    // Tracing on loads the SDK: the recording that shows it absent when off can see it.
    const loaded = service.modules().join("\n");
    expect(loaded).toContain("@opentelemetry/sdk-trace");
    expect(loaded).toContain("bullmq-otel");
  }, 60_000);
});
