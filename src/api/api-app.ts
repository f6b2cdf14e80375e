import type { Readable } from "node:stream";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import type { z } from "zod";
import { validate } from "../contract/field-issues.js";
import type { ApiDeps } from "./api-deps.js";
import { ApiError, invalidRequest } from "./api-error.js";
import { authenticate, type Caller } from "./auth.js";

export type Method = "GET" | "POST";

/** A route as the OpenAPI document and the 405 handling see it. */
export interface RouteSpec {
  readonly method: Method;
  /** Fastify's form: `/v1/batches/:batchId`. */
  readonly url: string;
  readonly summary: string;
  /** False for health, readiness, metrics and the OpenAPI document. */
  readonly auth: boolean;
  readonly params?: z.ZodType;
  readonly query?: z.ZodType;
  readonly body?: z.ZodType;
  /** Other request media types accepted beside JSON (text/csv for batches). */
  readonly bodyTypes?: readonly string[];
}

export interface Handled<P, Q, B> {
  readonly caller: Caller;
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
}

export interface ApiRouter {
  readonly app: FastifyInstance;
  readonly deps: ApiDeps;
  readonly routes: RouteSpec[];
  add<P = undefined, Q = undefined, B = undefined>(
    spec: RouteSpec,
    handler: (ctx: Handled<P, Q, B>) => Promise<unknown>,
  ): void;
}

const NOBODY: Caller = Object.freeze({ name: "", accounts: [] });

function parsePart<T>(schema: z.ZodType | undefined, value: unknown, where: string): T {
  if (!schema) return undefined as T;
  const parsed = validate(schema, value ?? {});
  if (!parsed.success)
    throw invalidRequest(
      parsed.issues.map((i) => ({ field: i.field ? `${where}.${i.field}` : where, rule: i.rule })),
    );
  return parsed.data as T;
}

/** A Fastify app with moneyq's error shape, bearer authentication and body limits. */
export function createApiRouter(deps: ApiDeps): ApiRouter {
  const app = Fastify({ logger: false, bodyLimit: deps.bodyLimitBytes, return503OnClosing: true });
  const routes: RouteSpec[] = [];

  // A CSV upload stays a stream: a batch file is read row by row, never whole.
  app.addContentTypeParser("text/csv", (_request, payload, done) => done(null, payload));

  app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, request, reply) => {
    if (error instanceof ApiError) return reply.code(error.status).send(error.body());
    const status = error.statusCode ?? 500;
    if (status === 415) {
      const type = request.headers["content-type"] ?? "none";
      return reply
        .code(415)
        .send(
          new ApiError(
            415,
            "unsupported_media_type",
            `content-type ${type} is not accepted here: send application/json (or text/csv for batches)`,
          ).body(),
        );
    }
    if (status === 413)
      return reply
        .code(413)
        .send(
          new ApiError(
            413,
            "body_too_large",
            `the body is larger than ${deps.bodyLimitBytes} bytes`,
          ).body(),
        );
    if (status === 400 && error.code?.startsWith("FST_ERR_CTP"))
      return reply.code(400).send(new ApiError(400, "invalid_body", error.message).body());
    if (status < 500)
      return reply.code(status).send(new ApiError(status, "bad_request", error.message).body());
    deps.logger.error({ err: error.message, url: request.url }, "API request failed");
    return reply
      .code(500)
      .send(
        new ApiError(500, "internal_error", "internal error; the service log has details").body(),
      );
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0] as string;
    const allowed = routes.filter((r) => matches(r.url, path)).map((r) => r.method);
    if (allowed.length > 0)
      return reply
        .code(405)
        .header("allow", allowed.join(", "))
        .send(
          new ApiError(
            405,
            "method_not_allowed",
            `${request.method} is not allowed on ${path}; allowed: ${allowed.join(", ")}`,
          ).body(),
        );
    return reply
      .code(404)
      .send(new ApiError(404, "not_found", `no route ${request.method} ${path}`).body());
  });

  return {
    app,
    deps,
    routes,
    add(spec, handler) {
      routes.push(spec);
      app.route({
        method: spec.method,
        url: spec.url,
        handler: async (request, reply) => {
          const caller = spec.auth
            ? authenticate(request.headers.authorization, deps.tokens)
            : NOBODY;
          const params = parsePart(spec.params, request.params, "params");
          const query = parsePart(spec.query, request.query, "query");
          const isStream = typeof (request.body as Readable | undefined)?.pipe === "function";
          if (isStream && !spec.bodyTypes?.includes("text/csv")) {
            // Read and dropped, not destroyed: destroying it would close the socket before the answer.
            (request.body as Readable).resume();
            throw new ApiError(
              415,
              "unsupported_media_type",
              `content-type text/csv is not accepted on ${spec.url}: send application/json`,
            );
          }
          const body = isStream ? request.body : parsePart(spec.body, request.body, "body");
          return handler({
            caller,
            params,
            query,
            body,
            request,
            reply,
          } as Handled<never, never, never>);
        },
      });
    },
  };
}

function matches(pattern: string, path: string): boolean {
  const a = pattern.split("/");
  const b = path.split("/");
  return a.length === b.length && a.every((part, i) => part.startsWith(":") || part === b[i]);
}
