// OpenTelemetry traces, from the OTEL_* variables of the specification.
import { z } from "zod";
import {
  TRACE_PROTOCOLS,
  TRACE_SAMPLERS,
  type TraceProtocol,
  type TraceSamplerName,
} from "./choices.js";
import { CONFIG_DEFAULTS } from "./defaults.js";
import type { EnvReader } from "./env-reader.js";
import { matching } from "./rules.js";

/**
 * Where and how spans are exported, from the standard OTEL_* variables (docs/configuration.md,
 * "Traces"). Tracing is on when an OTLP endpoint is set and OTEL_SDK_DISABLED is not true.
 */
export interface TracingConfig {
  /** The URL spans are POSTed to (OTLP over HTTP). */
  readonly endpoint: string;
  readonly protocol: TraceProtocol;
  /** Non-enumerable, like API keys: they may hold the tracing backend's key. */
  readonly headers: Readonly<Record<string, string>>;
  readonly serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES: what the operator says of this process (environment, region). */
  readonly resourceAttributes: Readonly<Record<string, string>>;
  readonly sampler: TraceSamplerName;
  /** The share of traces a *traceidratio sampler keeps, 0 to 1. */
  readonly samplerRatio: number;
}

/** OTLP over HTTP has one path per signal; a base endpoint gets the traces' path appended. */
const OTLP_TRACES_PATH = "v1/traces";

/** An http(s) URL without credentials (they belong in the headers, which stay out of sight). */
const otlpEndpoint = z.string().superRefine((value, ctx) => {
  let url: URL | undefined;
  try {
    url = /^https?:\/\/\S+$/.test(value) ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (url === undefined) ctx.addIssue({ code: "custom", message: "must be an http(s) URL" });
  else if (url.username !== "" || url.password !== "")
    ctx.addIssue({
      code: "custom",
      message: "must not carry credentials: give them in OTEL_EXPORTER_OTLP_HEADERS",
    });
});

/**
 * OpenTelemetry's standard variables, read only when an OTLP endpoint is set: the traces'
 * own endpoint, headers and protocol win over the general ones, as the specification says.
 */
export function readTracing(read: EnvReader): TracingConfig | undefined {
  const disabled = read.check("OTEL_SDK_DISABLED", otelFlag, "false") === "true";
  const ownEndpoint = read.check("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", otlpEndpoint, undefined);
  const base = read.check("OTEL_EXPORTER_OTLP_ENDPOINT", otlpEndpoint, undefined);
  const endpoint = ownEndpoint ?? (base && `${base.replace(/\/*$/, "/")}${OTLP_TRACES_PATH}`);
  const named = ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"];
  // Off unless an endpoint is given; with one that is bad, the rest is still checked.
  if (disabled || named.every((name) => read.text(name) === undefined)) return undefined;
  // moneyq exports OTLP over HTTP only: grpc is refused.
  const protocolRule = z.enum(TRACE_PROTOCOLS);
  const protocol =
    read.check("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", protocolRule, undefined) ??
    read.check(
      "OTEL_EXPORTER_OTLP_PROTOCOL",
      protocolRule,
      CONFIG_DEFAULTS.OTEL_EXPORTER_OTLP_PROTOCOL,
    );
  const sampler = read.check(
    "OTEL_TRACES_SAMPLER",
    z.enum(TRACE_SAMPLERS),
    CONFIG_DEFAULTS.OTEL_TRACES_SAMPLER,
  );
  const ratio = read.check(
    "OTEL_TRACES_SAMPLER_ARG",
    matching(/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/, "must be a number from 0 to 1"),
    String(CONFIG_DEFAULTS.OTEL_TRACES_SAMPLER_ARG),
  );
  const entry = {
    endpoint: endpoint ?? "",
    protocol,
    serviceName: read.check(
      "OTEL_SERVICE_NAME",
      matching(/^\S{1,255}$/, "must be 1 to 255 characters without spaces"),
      CONFIG_DEFAULTS.OTEL_SERVICE_NAME,
    ),
    resourceAttributes: Object.freeze(keyValues(read, "OTEL_RESOURCE_ATTRIBUTES", /^[^\s=,]+$/)),
    sampler,
    samplerRatio: Number(ratio),
  } as TracingConfig;
  const headers = {
    ...keyValues(read, "OTEL_EXPORTER_OTLP_HEADERS", HEADER_NAME),
    ...keyValues(read, "OTEL_EXPORTER_OTLP_TRACES_HEADERS", HEADER_NAME),
  };
  Object.defineProperty(entry, "headers", { value: Object.freeze(headers), enumerable: false });
  return Object.freeze(entry);
}

/** The specification's boolean: case-insensitive true or false. */
const otelFlag = z
  .string()
  .transform((v) => v.toLowerCase())
  .refine((v) => v === "true" || v === "false", { message: "must be true or false" });

/** An HTTP header name (RFC 9110's token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * A list `name=value,name=value` as the OpenTelemetry specification writes headers and resource
 * attributes, each value percent-decoded. A bad entry is named by its place, never its text:
 * a header's value may be a key.
 */
function keyValues(read: EnvReader, variable: string, name: RegExp): Record<string, string> {
  const out: Record<string, string> = {};
  const listed = read.text(variable);
  if (listed === undefined) return out;
  listed.split(",").forEach((part, index) => {
    if (part.trim() === "") return;
    const at = part.indexOf("=");
    const key = part.slice(0, Math.max(at, 0)).trim();
    let value: string | undefined;
    try {
      value = decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      value = undefined;
    }
    if (at < 1 || !name.test(key) || value === undefined || !/^[\x20-\x7e]*$/.test(value)) {
      read.issues.push({
        variable,
        rule: `entry ${index + 1} must be name=value: a name without spaces, then visible ASCII characters (percent-encoded if need be)`,
      });
      return;
    }
    out[key] = value;
  });
  return out;
}
