import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { keyspace, resultMarkerKey } from "../../src/redis/keys.js";
import { DEMO_API_KEY } from "../../src/sandbox/index.js";
import { BANK_PAYOUT_BODY } from "../fixtures/batches.js";
import { useTestRedis } from "../helpers/redis.js";
import { useSandboxProcess } from "../helpers/sandbox-process.js";
import { startServiceProcess } from "../helpers/service-process.js";
import { waitUntil } from "../helpers/wait-until.js";

const redis = useTestRedis("notrace");
const sandbox = useSandboxProcess();
const API_TOKEN = `tok_${randomUUID().replace(/-/g, "")}`;

/** Packages that are OpenTelemetry or bring it: none may load while tracing is off. */
const OTEL =
  /@opentelemetry\/|bullmq-otel|@fastify\/otel|import-in-the-middle|require-in-the-middle/;

describe("traces off (no OTLP endpoint)", () => {
  it("a job runs end to end and no module of OpenTelemetry's SDK is loaded", async () => {
    const service = await startServiceProcess({
      REDIS_URL: redis.url,
      MONEYQ_REDIS_PREFIX: redis.prefix,
      PAYMENTS_API_URL: sandbox.baseUrl,
      PAYMENTS_API_KEY: DEMO_API_KEY,
      MONEYQ_CONFIRM_FIRST_DELAY_MS: "100",
      MONEYQ_API_TOKENS: JSON.stringify([
        { name: "tester", token: API_TOKEN, accounts: ["default"] },
      ]),
    });
    const enqueued = await fetch(`${service.apiUrl}/v1/jobs`, {
      method: "POST",
      headers: { authorization: `Bearer ${API_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({
        kind: "payout.bank",
        account: "default",
        idempotencyKey: `off-${randomUUID()}`,
        request: { body: BANK_PAYOUT_BODY },
      }),
    });
    expect(enqueued.status).toBe(202);
    const { jobId } = (await enqueued.json()) as { jobId: string };
    const admin = redis.connect();
    await waitUntil(
      async () =>
        (await admin.get(resultMarkerKey(keyspace(redis.prefix), "default", jobId))) !== null,
      20_000,
      "the job's result",
    );
    expect(await service.stop()).toBe(0);

    const modules = service.modules();
    // The recording saw the service's own modules (it works), ESM and CommonJS alike.
    expect(modules.some((m) => m.startsWith("esm ") && m.includes("/dist/service/"))).toBe(true);
    expect(modules.some((m) => m.startsWith("cjs ") && m.includes("/node_modules/ioredis/"))).toBe(
      true,
    );
    expect(modules.filter((m) => m.includes("/dist/tracing/open-telemetry.js"))).toEqual([]);
    // prom-client requires @opentelemetry/api for its exemplars whatever moneyq does; the API
    // alone registers nothing and records nothing. Nothing else of OpenTelemetry is loaded.
    const otel = modules.filter((m) => OTEL.test(m));
    expect(
      otel.filter((m) => !m.startsWith("cjs ") || !m.includes("/@opentelemetry/api/")),
    ).toEqual([]);
  }, 60_000);
});
