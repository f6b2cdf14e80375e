// The closed lists of values some variables take (log levels, OTLP protocols, samplers).
export const TRACE_PROTOCOLS = ["http/protobuf", "http/json"] as const;

export type TraceProtocol = (typeof TRACE_PROTOCOLS)[number];

/** The samplers of the OpenTelemetry environment specification that moneyq offers. */
export const TRACE_SAMPLERS = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const;

export type TraceSamplerName = (typeof TRACE_SAMPLERS)[number];

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

export type LogLevel = (typeof LOG_LEVELS)[number];
