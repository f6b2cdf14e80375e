import type { Config } from "../config/load-config.js";
import type { Logger } from "../logger.js";
import { NO_TRACING } from "./job-tracer.js";
import type { Tracing } from "./tracing.js";

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
