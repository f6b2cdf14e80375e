import type { FastifyPluginCallback } from "fastify";
import type { JobTracer } from "./job-tracer.js";

/** Tracing as a process runs it: the tracer its parts use, the API's plugin, and its end. */
export interface Tracing {
  readonly tracer: JobTracer;
  /** @fastify/otel's plugin, registered on the API app; undefined when tracing is off. */
  readonly apiPlugin: FastifyPluginCallback | undefined;
  /** Exports the spans not yet sent, then stops tracing. Idempotent. */
  close(): Promise<void>;
}
