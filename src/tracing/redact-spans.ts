import type { Attributes } from "@opentelemetry/api";
import type { ExportResult } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import { operations } from "../contract/operations.js";

/** Stands for a path moneyq cannot tell safe: a webhook URL may hold a token in its path. */
export const REDACTED_PATH = "/[redacted]";

/** Attributes never exported: a query, an error's or a result's words, any header. */
const DROPPED = new Set([
  "url.query",
  "http.request.body",
  "bullmq.job.failed.reason",
  "bullmq.job.result",
  "exception.message",
  "exception.stacktrace",
]);
const HEADER_PREFIXES = ["http.request.header.", "http.response.header."];

/**
 * Turns a request path into the operation's template (`/v1/transactions/{transactionId}`):
 * path segments may be a sub-account's or a transaction's id, a query a payment link's token.
 * Only the Payments API's paths under the upstream's base path are known; any other is
 * redacted whole.
 */
export class PathTemplates {
  readonly #patterns: { readonly pattern: RegExp; readonly template: string }[];

  /** `basePath`: the upstream base URL's path, such as `/v1`. */
  constructor(basePath: string) {
    const base = basePath.replace(/\/+$/, "");
    this.#patterns = Object.values(operations).map(({ path }) => ({
      pattern: new RegExp(
        `^${escapeRegExp(base)}${path
          .split(/\{\w+\}/)
          .map(escapeRegExp)
          .join("[^/]+")}/?$`,
      ),
      template: `${base}${path}`,
    }));
  }

  /** The template of `path` (its query cut off), or REDACTED_PATH. */
  of(path: string): string {
    const bare = path.split(/[?#]/, 1)[0] as string;
    return this.#patterns.find((p) => p.pattern.test(bare))?.template ?? REDACTED_PATH;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * A span's attributes as they may leave: URLs reduced to their templates (a server span's
 * path to its route), no query, no header, no error or result text.
 */
export function redactAttributes(attributes: Attributes, paths: PathTemplates): Attributes {
  const out: Attributes = {};
  const route = attributes["http.route"];
  for (const [key, value] of Object.entries(attributes)) {
    if (DROPPED.has(key) || HEADER_PREFIXES.some((p) => key.startsWith(p))) continue;
    if (key === "url.path" || key === "http.target")
      out[key] = typeof route === "string" ? route : paths.of(String(value));
    else if (key === "url.full" || key === "http.url") out[key] = redactUrl(String(value), paths);
    else out[key] = value;
  }
  return out;
}

function redactUrl(full: string, paths: PathTemplates): string {
  try {
    const url = new URL(full);
    return `${url.protocol}//${url.host}${paths.of(url.pathname)}`;
  } catch {
    return REDACTED_PATH;
  }
}

/** A copy of `span` whose attributes, events and links are redacted, and its status without words. */
export function redactSpan(span: ReadableSpan, paths: PathTemplates): ReadableSpan {
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => span.spanContext(),
    ...(span.parentSpanContext && { parentSpanContext: span.parentSpanContext }),
    startTime: span.startTime,
    endTime: span.endTime,
    status: { code: span.status.code },
    attributes: redactAttributes(span.attributes, paths),
    links: span.links.map((link) => ({
      ...link,
      ...(link.attributes && { attributes: redactAttributes(link.attributes, paths) }),
    })),
    events: span.events.map((event) => ({
      ...event,
      ...(event.attributes && { attributes: redactAttributes(event.attributes, paths) }),
    })),
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationScope: span.instrumentationScope,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
  };
}

/**
 * The exporter every span passes through: whatever an instrumentation records (undici's full
 * URL, fastify's path with its query, BullMQ's failure reason), only the redacted copy leaves.
 */
export class RedactingExporter implements SpanExporter {
  readonly #inner: SpanExporter;
  readonly #paths: PathTemplates;

  constructor(inner: SpanExporter, paths: PathTemplates) {
    this.#inner = inner;
    this.#paths = paths;
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.#inner.export(
      spans.map((s) => redactSpan(s, this.#paths)),
      resultCallback,
    );
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }
}
