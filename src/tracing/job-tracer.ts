import type { JobsOptions, Telemetry } from "bullmq";
import type { JobFacts, SpanAttributes } from "./job-spans.js";

/** What a span learns while it runs, added to it before it ends. */
export interface SpanNotes {
  note(attributes: SpanAttributes): void;
}

/** The part of a job's options that carries its trace to the worker. */
export type TraceOptions = Pick<JobsOptions, "telemetry">;

/**
 * How moneyq's queues, processors and API trace a job. It names no OpenTelemetry type: with
 * tracing off, `NO_TRACING` stands in and nothing of OpenTelemetry is loaded.
 */
export interface JobTracer {
  /** BullMQ's `telemetry` option of every Queue and Worker; undefined when tracing is off. */
  readonly telemetry: Telemetry | undefined;
  /**
   * Runs `add` for jobs about to be added, each in its enqueue span. A job enqueued `alone`
   * continues the caller's trace (its span is active around `add`); jobs enqueued together
   * each start a trace of their own, linked to the caller's span, so that a batch of 100,000
   * rows is 100,000 small traces. `add` spreads `traceOf(i)` into the i-th job's options.
   */
  enqueue<T>(
    jobs: readonly JobFacts[],
    alone: boolean,
    add: (traceOf: (index: number) => TraceOptions) => Promise<T>,
  ): Promise<T>;
  /**
   * Records the job's wait in its queue, over already: from `startMs` to `endMs` (epoch ms),
   * in the trace its options' `metadata` carries (the enqueue's), else in the active one.
   */
  waited(facts: JobFacts, startMs: number, endMs: number, metadata: string | undefined): void;
  /** Adds the job's facts to the active span: BullMQ's span of this attempt. */
  annotate(facts: JobFacts, more?: SpanAttributes): void;
  /** Runs `fn` in a span `name`, a child of the active one, saying `facts` and what `fn` notes. */
  span<T>(name: string, facts: JobFacts, fn: (notes: SpanNotes) => Promise<T>): Promise<T>;
}

const NO_NOTES: SpanNotes = Object.freeze({ note: () => undefined });
const NO_TRACE: TraceOptions = Object.freeze({});

/** Tracing off: every step runs as it would without any of this. */
export const NO_TRACING: JobTracer = Object.freeze({
  telemetry: undefined,
  enqueue: <T>(
    _jobs: readonly JobFacts[],
    _alone: boolean,
    add: (traceOf: (index: number) => TraceOptions) => Promise<T>,
  ) => add(() => NO_TRACE),
  waited: () => undefined,
  annotate: () => undefined,
  span: <T>(_name: string, _facts: JobFacts, fn: (notes: SpanNotes) => Promise<T>) => fn(NO_NOTES),
});
