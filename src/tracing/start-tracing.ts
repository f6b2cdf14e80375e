import type { FastifyPluginCallback } from "fastify";
import type { Config } from "../config.js";
import type { Logger } from "../logger.js";
import { type JobTracer, NO_TRACING } from "./job-tracer.js";

/** Tracing as a process runs it: the tracer its parts use, the API's plugin, and its end. */
export interface Tracing {
  readonly tracer: JobTracer;
  /** @fastify/otel's plugin, registered on the API app; undefined when tracing is off. */
  readonly apiPlugin: FastifyPluginCallback | undefined;
  /** Exports the spans not yet sent, then stops tracing. Idempotent. */
  close(): Promise<void>;
}

export const TRACING_OFF: Tracing = Object.freeze({
  tracer: NO_TRACING,
  apiPlugin: undefined,
  close: () => Promise.resolve(),
});

/**
 * Starts OpenTelemetry when the configuration turns tracing on. The SDK is imported only then:
 * with tracing off, no module of OpenTelemetry's SDK, exporters or instrumentations is loaded.
 */
export async function startTracing(config: Config, logger: Logger): Promise<Tracing> {
  if (config.tracing === undefined) return TRACING_OFF;
  const { startOpenTelemetry } = await import("./open-telemetry.js");
  return startOpenTelemetry(config.tracing, config.paymentsApiUrl, logger);
}
