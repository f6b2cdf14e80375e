import {
  context,
  type Link,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { BullMQOtel } from "bullmq-otel";
import { jobAttributes, SPAN } from "./job-spans.js";
import type { JobTracer, TraceOptions } from "./job-tracer.js";

/** What BullMQ throws to move a job (later, back to wait, rate-limited): a move, not a failure. */
const MOVES = new Set(["DelayedError", "WaitingError", "WaitingChildrenError", "RateLimitError"]);

/** The error's type only: its message may carry what a span must not (a provider's words). */
function ended(span: Span, error: unknown): void {
  const type = error instanceof Error ? error.name : typeof error;
  span.setAttribute("error.type", type);
  if (!MOVES.has(type)) span.setStatus({ code: SpanStatusCode.ERROR });
}

/** moneyq's spans of a job over OpenTelemetry's API, and BullMQ's through bullmq-otel. */
export function otelJobTracer(tracer: Tracer): JobTracer {
  const telemetry = new BullMQOtel({ tracerName: "bullmq" });
  const metadataOf = (span: Span) =>
    telemetry.contextManager.getMetadata(trace.setSpan(context.active(), span));
  return {
    telemetry,
    async enqueue(jobs, alone, add) {
      const caller = trace.getActiveSpan()?.spanContext();
      const links: Link[] = !alone && caller ? [{ context: caller }] : [];
      const spans = jobs.map((facts) =>
        tracer.startSpan(SPAN.enqueue, {
          kind: SpanKind.PRODUCER,
          attributes: jobAttributes({ ...facts, attempt: 0 }),
          links,
          root: !alone,
        }),
      );
      const traces: TraceOptions[] = spans.map((span) => ({
        telemetry: { metadata: metadataOf(span) },
      }));
      const run = () => add((index) => traces[index] ?? {});
      try {
        const first = spans[0];
        return await (alone && first
          ? context.with(trace.setSpan(context.active(), first), run)
          : run());
      } catch (error) {
        for (const span of spans) ended(span, error);
        throw error;
      } finally {
        for (const span of spans) span.end();
      }
    },
    waited(facts, startMs, endMs, metadata) {
      const parent =
        metadata === undefined
          ? context.active()
          : telemetry.contextManager.fromMetadata(context.active(), metadata);
      tracer
        .startSpan(SPAN.queueWait, { startTime: startMs, attributes: jobAttributes(facts) }, parent)
        .end(endMs);
    },
    annotate(facts, more) {
      trace.getActiveSpan()?.setAttributes({ ...jobAttributes(facts), ...more });
    },
    span(name, facts, fn) {
      return tracer.startActiveSpan(name, { attributes: jobAttributes(facts) }, async (span) => {
        try {
          return await fn({ note: (attributes) => span.setAttributes(attributes) });
        } catch (error) {
          ended(span, error);
          throw error;
        } finally {
          span.end();
        }
      });
    },
  };
}
