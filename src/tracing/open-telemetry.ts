import FastifyOtel from "@fastify/otel";
import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { setGlobalErrorHandler, W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { registerInstrumentations } from "@opentelemetry/instrumentation";
import { UndiciInstrumentation } from "@opentelemetry/instrumentation-undici";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import type { TracingConfig } from "../config/load-config.js";
import type { Logger } from "../logger.js";
import { jobSampler } from "./job-sampler.js";
import { otelJobTracer } from "./otel-job-tracer.js";
import { PathTemplates, RedactingExporter } from "./redact-spans.js";
import type { Tracing } from "./tracing.js";

/** The embedded sandbox's base path, the upstream's when PAYMENTS_API_URL is unset. */
const EMBEDDED_BASE_PATH = "/v1";
/** A failing export (the backend down) is logged at most this often. */
const EXPORT_ERROR_LOG_MS = 60_000;

/**
 * The exporter, with what config/tracing.ts validated passed explicitly rather than left for the
 * exporter to read from the environment: a configuration built from another environment
 * (tests, an embedding program) is honoured, and the headers stay the non-enumerable values
 * config/tracing.ts holds. The exporter still reads the variables it alone knows (OTEL_EXPORTER_OTLP_
 * TIMEOUT, _COMPRESSION, _CERTIFICATE), as the SDK documents.
 */
function exporterOf(config: TracingConfig, upstreamUrl: string | undefined): RedactingExporter {
  const options = { url: config.endpoint, headers: { ...config.headers } };
  const exporter =
    config.protocol === "http/json"
      ? new JsonTraceExporter(options)
      : new ProtobufTraceExporter(options);
  const basePath = upstreamUrl === undefined ? EMBEDDED_BASE_PATH : new URL(upstreamUrl).pathname;
  return new RedactingExporter(exporter, new PathTemplates(basePath));
}

/**
 * OpenTelemetry for this process: a tracer provider exporting in batches through the redacting
 * exporter, W3C trace context, AsyncLocalStorage for the active span, undici's and fastify's
 * instrumentations, and BullMQ's spans through bullmq-otel.
 */
export function startOpenTelemetry(
  config: TracingConfig,
  upstreamUrl: string | undefined,
  logger: Logger,
): Tracing {
  const provider = new TracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({ ...config.resourceAttributes, "service.name": config.serviceName }),
    ),
    sampler: jobSampler(config.sampler, config.samplerRatio),
    spanProcessors: [new BatchSpanProcessor({ exporter: exporterOf(config, upstreamUrl) })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  let loggedAt = -Infinity;
  // The error's message only: an export error never holds the headers.
  setGlobalErrorHandler((error) => {
    if (performance.now() - loggedAt < EXPORT_ERROR_LOG_MS) return;
    loggedAt = performance.now();
    logger.warn({ err: String((error as Error)?.message ?? error) }, "trace export failed");
  });
  const fastify = new FastifyOtel.FastifyOtelInstrumentation({
    registerOnInitialization: false,
    // The request alone, the root of the job's trace: a span per lifecycle hook, or one for the
    // handler between the request and the enqueue, would cost more than it tells.
    instrumentHooks: false,
    instrumentHandler: false,
  });
  // Only a request made inside a traced job or request gets a span (not a stray health check).
  const undici = new UndiciInstrumentation({ requireParentforSpans: true });
  const unregister = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [undici, fastify],
  });
  logger.info(
    { traces: new URL(config.endpoint).origin, protocol: config.protocol },
    "tracing on: a trace per job",
  );

  let closing: Promise<void> | undefined;
  return {
    tracer: otelJobTracer(provider.getTracer("moneyq")),
    apiPlugin: fastify.plugin(),
    close() {
      // Every step runs even when one fails; the spans not yet sent are exported first.
      closing ??= (async () => {
        try {
          unregister();
        } finally {
          try {
            await provider.shutdown();
          } finally {
            trace.disable();
            propagation.disable();
            context.disable();
          }
        }
      })();
      return closing;
    },
  };
}
