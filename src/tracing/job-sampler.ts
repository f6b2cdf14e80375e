import { type Context, SpanKind, trace } from "@opentelemetry/api";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  type Sampler,
  SamplingDecision,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace";
import type { TraceSamplerName } from "../config/load-config.js";

/** OTEL_TRACES_SAMPLER's sampler, as the OpenTelemetry specification defines each name. */
function configuredSampler(name: TraceSamplerName, ratio: number): Sampler {
  switch (name) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return new TraceIdRatioBasedSampler(ratio);
    case "parentbased_always_on":
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}

/**
 * The configured sampler, except that an INTERNAL span with no parent is never recorded: it
 * is housekeeping outside any job or request (BullMQ traces each idle fetch and each stalled-
 * job check), and a trace is a job's or a request's.
 */
export function jobSampler(name: TraceSamplerName, ratio: number): Sampler {
  const configured = configuredSampler(name, ratio);
  return {
    shouldSample(context: Context, traceId, spanName, kind, attributes, links) {
      if (kind === SpanKind.INTERNAL && trace.getSpanContext(context) === undefined)
        return { decision: SamplingDecision.NOT_RECORD };
      return configured.shouldSample(context, traceId, spanName, kind, attributes, links);
    },
    toString: () => `JobSampler{${configured.toString()}}`,
  };
}
