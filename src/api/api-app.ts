import type { Readable } from "node:stream";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { z } from "zod";
import { BatchNotFoundError } from "../batches/batch-errors.js";
import { PaymentsError } from "../client/errors.js";
import { CONFIG_DEFAULTS, type Permission } from "../config/load-config.js";
import { validate } from "../contract/field-issues.js";
import { MoneyqError } from "../errors/moneyq-error.js";
import { RedisDownError, redisTroubleOf } from "../redis/refusals.js";
import { NotReplicatedError } from "../redis/replica-waits.js";
import type { ApiDeps } from "./api-deps.js";
import { ApiError, invalidRequest, UnreadableRequestError } from "./api-error.js";
import { authenticate, type Caller, requirePermission } from "./auth.js";
import { isAnsweredCode } from "./error-statuses.js";
import {
  type AuditFields,
  acceptedTypes,
  answerClientError,
  callerOf,
  clientWentAway,
  installJsonParser,
  JOB_BODY_LIMIT_BYTES,
  recordAudit,
  setCaller,
  writeAuditLine,
} from "./request-guards.js";

export type Method = "GET" | "POST";

declare module "fastify" {
  interface FastifyContextConfig {
    /** Request media types a route accepts beside JSON, named by its 415 answer. */
    bodyTypes?: readonly string[] | undefined;
    /** The route as declared: the token scope's hooks read its permission and audit action. */
    route?: RouteSpec | undefined;
  }
}

/** A request part's schema; a route without the part has z.ZodUndefined's: nothing. */
type PartSchema = z.ZodType;

interface RouteParts<
  P extends PartSchema = PartSchema,
  Q extends PartSchema = PartSchema,
  B extends PartSchema = PartSchema,
> {
  readonly method: Method;
  /** Fastify's form: `/v1/batches/:batchId`. */
  readonly url: string;
  readonly summary: string;
  readonly params?: P;
  readonly query?: Q;
  readonly body?: B;
  /** Other request media types accepted beside JSON (text/csv for batches). */
  readonly bodyTypes?: readonly string[];
  /** Headers the route reads beside authorization (documented; the handler checks them). */
  readonly headers?: z.ZodType;
  /** A mutating route: each call writes one audit line naming this action. */
  readonly audit?: string;
  /** False for what is not part of the API (the console's files): left out of OpenAPI. */
  readonly documented?: false;
}

/** A route that needs a bearer token, and the permission its token must hold. */
export interface AuthRouteSpec<
  P extends PartSchema = PartSchema,
  Q extends PartSchema = PartSchema,
  B extends PartSchema = PartSchema,
> extends RouteParts<P, Q, B> {
  readonly auth: true;
  readonly permission: Permission;
}

/**
 * A route as the OpenAPI document and the 405 handling see it. Only health, readiness,
 * metrics and the OpenAPI document go without a token (and so without a permission).
 */
export type RouteSpec<
  P extends PartSchema = PartSchema,
  Q extends PartSchema = PartSchema,
  B extends PartSchema = PartSchema,
> = AuthRouteSpec<P, Q, B> | (RouteParts<P, Q, B> & { readonly auth: false });

export interface Handled<P, Q, B> {
  readonly caller: Caller;
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  /** Records the account and ids of the audit line (mutating routes). */
  audit(fields: AuditFields): void;
}

/** What a route file is handed: the routes it adds go into its own encapsulated scope. */
export interface ApiRouter {
  /** The route file's own Fastify scope. */
  readonly app: FastifyInstance;
  readonly deps: ApiDeps;
  readonly routes: RouteSpec[];
  /** Each part reaches the handler as its schema gives it (a route without one gets none). */
  add<
    P extends PartSchema = z.ZodUndefined,
    Q extends PartSchema = z.ZodUndefined,
    B extends PartSchema = z.ZodUndefined,
  >(
    spec: RouteSpec<P, Q, B> & { readonly bodyTypes?: undefined },
    handler: (ctx: Handled<z.output<P>, z.output<Q>, z.output<B>>) => Promise<unknown>,
  ): void;
  /**
   * A route that also takes an upload in one of its `bodyTypes` (a CSV file): the body reaches
   * the handler as its schema gives it, or as the upload's stream, unread.
   */
  addUpload<
    P extends PartSchema = z.ZodUndefined,
    Q extends PartSchema = z.ZodUndefined,
    B extends PartSchema = z.ZodUndefined,
  >(
    spec: RouteSpec<P, Q, B> & { readonly bodyTypes: readonly string[] },
    handler: (ctx: Handled<z.output<P>, z.output<Q>, z.output<B> | Readable>) => Promise<unknown>,
  ): void;
}

/** Whether a request's body is an upload's stream (a parser left it unread), not parsed JSON. */
export function isUpload(body: unknown): body is Readable {
  return typeof (body as Readable | undefined)?.pipe === "function";
}

/** A route file: adds its routes to the router it is handed. */
export type RoutesPlugin = (router: ApiRouter) => void;

/**
 * Where a route file's routes live: behind a token (the scope's hooks authenticate each request,
 * check its route's permission before the body is read, and write the audit line of each call
 * to a mutating route), or public (health, readiness, metrics, OpenAPI, the console's files).
 */
export type RouteScope = "token" | "public";

/** The API's Fastify app, its route table, and how route files join it. */
export interface ApiApp {
  readonly app: FastifyInstance;
  readonly deps: ApiDeps;
  /** Filled as the route files load (by `app.ready()`, which `inject` and `listen` await). */
  readonly routes: RouteSpec[];
  /** Registers each route file as an encapsulated Fastify plugin inside `scope`'s plugin. */
  register(scope: RouteScope, plugins: readonly RoutesPlugin[]): void;
}

/** Longer path parameters are refused by the router itself; shorter ones reach validation. */
const MAX_PARAM_LENGTH = 2048;

/** An API route without query parameters refuses any it is sent, as it would unknown fields. */
const NO_QUERY = z.strictObject({});

const NOBODY: Caller = Object.freeze({ name: "", accounts: [], permissions: [] });

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
export function createApiRouter(deps: ApiDeps): ApiApp {
  const app = createApp(deps);
  const routes: RouteSpec[] = [];
  app.setErrorHandler(errorHandler(deps));
  app.setNotFoundHandler(notFoundHandler(routes));
  return {
    app,
    deps,
    routes,
    register(scope, plugins) {
      app.register(async (scoped) => {
        if (scope === "token") addTokenHooks(scoped, deps);
        for (const plugin of plugins)
          scoped.register(async (own) => plugin(routerOf(own, { deps, routes, scope })));
      });
    },
  };
}

/** The Fastify app: timeouts, limits, parsers and the tracing plugin, before any route. */
function createApp(deps: ApiDeps): FastifyInstance {
  const timeouts = deps.timeouts ?? {
    requestMs: CONFIG_DEFAULTS.MONEYQ_API_REQUEST_TIMEOUT_MS,
    headersMs: CONFIG_DEFAULTS.MONEYQ_API_HEADERS_TIMEOUT_MS,
    idleMs: CONFIG_DEFAULTS.MONEYQ_API_IDLE_TIMEOUT_MS,
  };
  const app = Fastify({
    logger: false,
    bodyLimit: JOB_BODY_LIMIT_BYTES,
    return503OnClosing: true,
    requestTimeout: timeouts.requestMs,
    connectionTimeout: timeouts.idleMs,
    http: {
      headersTimeout: Math.min(timeouts.headersMs, timeouts.requestMs),
      // Node checks the request and header timeouts this often (30 s by default).
      connectionsCheckingInterval: Math.min(1_000, timeouts.headersMs),
    },
    // Long ids reach validation, which names the field and its rule.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Errors the router raises before any route (bad URL encoding) get moneyq's shape too.
    frameworkErrors: (error, _request, reply) => sendUrlError(reply as FastifyReply, error),
    clientErrorHandler: answerClientError,
  });
  // Before any route: the plugin wraps each route as it is added.
  if (deps.tracingPlugin) app.register(deps.tracingPlugin);
  installJsonParser(app);
  // A CSV upload stays a stream: a batch file is read row by row, never whole.
  app.addContentTypeParser("text/csv", (_request, payload, done) => done(null, payload));
  return app;
}

/** The router a route file is handed: its routes go into `scope`, and into the route table. */
function routerOf(
  app: FastifyInstance,
  on: { readonly deps: ApiDeps; readonly routes: RouteSpec[]; readonly scope: RouteScope },
): ApiRouter {
  const { deps, routes, scope } = on;
  const add = <P, Q, B>(spec: RouteSpec, handler: (ctx: Handled<P, Q, B>) => Promise<unknown>) => {
    if (spec.auth !== (scope === "token"))
      throw new Error(`${spec.method} ${spec.url}: auth ${spec.auth} in the ${scope} scope`);
    routes.push(spec);
    app.route({
      method: spec.method,
      url: spec.url,
      config: { bodyTypes: spec.bodyTypes, route: spec },
      ...(spec.bodyTypes?.includes("text/csv") && { bodyLimit: deps.bodyLimitBytes }),
      handler: routeHandler(spec, handler),
    });
  };
  return { app, deps, routes, add, addUpload: add };
}

/**
 * The token scope's hooks. The token and its permission are checked before the body is read:
 * a refused request costs no upload. The caller is known before the permission check, so a
 * 403's audit line names it.
 */
function addTokenHooks(scope: FastifyInstance, deps: ApiDeps): void {
  scope.addHook("onRequest", async (request, reply) => {
    const { route } = request.routeOptions.config;
    // Only token routes join this scope (routerOf); anything else fails closed.
    if (!route?.auth) throw new Error(`${request.method} ${request.url}: no token route`);
    try {
      const caller = authenticate(request.headers.authorization, deps.tokens);
      setCaller(request, caller);
      requirePermission(caller, route.permission, `${route.method} ${route.url}`);
    } catch (error) {
      reply.header("connection", "close");
      throw error;
    }
    // Every route behind a token reads or writes Redis: with no connection, it would wait.
    const status = deps.redisStatus?.();
    if (status !== undefined && status !== "ready") throw new RedisDownError(status);
  });
  scope.addHook("onResponse", async (request, reply) => {
    const action = request.routeOptions.config.route?.audit;
    if (action !== undefined) writeAuditLine(deps.logger, action, request, reply);
  });
}

/** Checks a request's parts against the route's schemas, then calls the route's handler. */
function routeHandler<P, Q, B>(
  spec: RouteSpec,
  handler: (ctx: Handled<P, Q, B>) => Promise<unknown>,
) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = callerOf(request) ?? NOBODY;
    const params = parsePart(spec.params, request.params, "params");
    const query = parsePart(
      spec.query ?? (spec.auth && !spec.bodyTypes ? NO_QUERY : undefined),
      request.query,
      "query",
    );
    const sent = request.body;
    const isStream = isUpload(sent);
    if (isStream && !spec.bodyTypes?.includes("text/csv")) {
      // Read and dropped, not destroyed: destroying it would close the socket before the answer.
      sent.resume();
      throw new ApiError(
        "unsupported_media_type",
        `content-type text/csv is not accepted on ${spec.url}: send application/json`,
      );
    }
    if (spec.auth && !spec.body && sent !== undefined) {
      throw invalidRequest([{ field: "body", rule: "must be empty: this route takes no body" }]);
    }
    const body = isStream ? sent : parsePart(spec.body, sent, "body");
    return handler({
      caller,
      params,
      query,
      body,
      request,
      reply,
      audit: (fields: AuditFields) => recordAudit(request, fields),
    } as Handled<P, Q, B>);
  };
}

type RouterError = Error & { statusCode?: number; code?: string };

/** Every error a route or the framework raises, answered in moneyq's shape; never a 500 for input. */
function errorHandler(deps: ApiDeps) {
  return (error: RouterError, request: FastifyRequest, reply: FastifyReply) => {
    if (clientWentAway(request, error)) {
      deps.logger.debug({ url: request.url }, "client closed the connection before the answer");
      return reply.code(499).send();
    }
    const send = (answer: ApiError) => reply.code(answer.status).send(answer.body());
    if (error instanceof ApiError) return send(error);
    // A batch can vanish between its lookup and its use (a refused submission deletes its meta).
    if (error instanceof BatchNotFoundError)
      return send(new ApiError("not_found", `batch ${error.batchId} not found`));
    // Redis refused or could not be reached: nothing was accepted that a retry would repeat
    // (a job's key finds its job; a batch resumes), so the same request again is safe.
    const trouble = redisTroubleOf(error);
    if (trouble) {
      logError(deps, "API request refused: Redis is in trouble", error, request);
      const message =
        error instanceof NotReplicatedError
          ? error.message
          : `${trouble.reason}; nothing was done that the same request would repeat: send it again after ${trouble.retryAfterSeconds} s`;
      reply.header("retry-after", String(trouble.retryAfterSeconds));
      return send(new ApiError(trouble.code, message));
    }
    // A domain error whose code the API answers (error-statuses.ts): that code, its status.
    // Not the provider's: its 404 or 409 is about the provider's records, not this request.
    if (
      error instanceof MoneyqError &&
      !(error instanceof PaymentsError) &&
      isAnsweredCode(error.code)
    )
      return send(new ApiError(error.code, error.message));
    const framework = frameworkError(error, request);
    if (framework) {
      if (framework.status === 413) reply.header("connection", "close");
      return send(framework);
    }
    logError(deps, "API request failed", error, request);
    return send(new ApiError("internal_error", "internal error; the service log has details"));
  };
}

/** Logs a request's error; a run of the same one (Redis refusing every request) once per interval. */
function logError(deps: ApiDeps, msg: string, error: Error, request: FastifyRequest): void {
  const fields = { url: request.url };
  if (deps.errors) deps.errors.report("api", msg, error, fields);
  else deps.logger.error({ ...fields, err: error.message }, msg);
}

/** A framework error (415, 413, 408, a bad body, any other 4xx) as moneyq's ApiError. */
function frameworkError(error: RouterError, request: FastifyRequest): ApiError | undefined {
  const status = error.statusCode ?? 500;
  if (status === 415) {
    const type = request.headers["content-type"] ?? "none";
    const { bodyTypes } = request.routeOptions.config;
    const accepted = acceptedTypes(bodyTypes).join(", ");
    return new ApiError(
      "unsupported_media_type",
      `content-type ${type} is not accepted on ${request.method} ${request.routeOptions.url}: send ${accepted}`,
      { details: [{ field: "content-type", rule: `must be one of ${accepted}` }] },
    );
  }
  if (status === 413) {
    const limit = request.routeOptions.bodyLimit ?? JOB_BODY_LIMIT_BYTES;
    return new ApiError("body_too_large", `the body is larger than ${limit} bytes`, {
      details: [{ field: "body", rule: `at most ${limit} bytes` }],
    });
  }
  if (status === 408) return new ApiError("request_timeout", "the request did not arrive in time");
  if (status === 400 && error.code?.startsWith("FST_ERR_CTP"))
    return new ApiError("invalid_body", error.message);
  if (status < 500) return new UnreadableRequestError(status, error.message);
  return undefined;
}

/** An unknown path is 404; a known path with another method is 405 naming the allowed ones. */
function notFoundHandler(routes: readonly RouteSpec[]) {
  return (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split("?")[0] as string;
    const allowed = routes.filter((r) => matches(r.url, path)).map((r) => r.method);
    if (allowed.length > 0)
      return reply
        .code(405)
        .header("allow", allowed.join(", "))
        .send(
          new ApiError(
            "method_not_allowed",
            `${request.method} is not allowed on ${path}; allowed: ${allowed.join(", ")}`,
          ).body(),
        );
    return reply
      .code(404)
      .send(new ApiError("not_found", `no route ${request.method} ${path}`).body());
  };
}

/** The router's own refusals, in moneyq's shape; the message never echoes the URL. */
function sendUrlError(reply: FastifyReply, error: Error & { code?: string }): void {
  const rule =
    error.code === "FST_ERR_MAX_PARAM_LENGTH"
      ? `each path parameter at most ${MAX_PARAM_LENGTH} characters`
      : "must be valid percent-encoding (RFC 3986)";
  reply.code(400).send(
    new ApiError("invalid_url", `the URL is not valid: path: ${rule}`, {
      details: [{ field: "path", rule }],
    }).body(),
  );
}

/** Whether `path` is one of `pattern`'s: `:name` matches one segment, a last `*` the rest. */
function matches(pattern: string, path: string): boolean {
  const a = pattern.split("/");
  const b = path.split("/");
  if (a.at(-1) === "*")
    return (
      b.length >= a.length && matches(a.slice(0, -1).join("/"), b.slice(0, a.length - 1).join("/"))
    );
  return a.length === b.length && a.every((part, i) => part.startsWith(":") || part === b[i]);
}
