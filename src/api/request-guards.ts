import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { installJsonBodyParser } from "../contract/json-body-parser.js";
import type { Logger } from "../logger.js";
import { ApiError } from "./api-error.js";
import type { Caller } from "./auth.js";
import type { ApiErrorCode } from "./error-statuses.js";

/** The body limit of every route but batch submission: one job is small. */
export const JOB_BODY_LIMIT_BYTES = 64 * 1024;

/** The media types a route reads; a JSON body everywhere, CSV where a route says so. */
export const acceptedTypes = (bodyTypes: readonly string[] | undefined) => [
  "application/json",
  ...(bodyTypes ?? []),
];

/** Where a field path of the parsed body points, as the API names fields ("body.x.y"). */
const fieldOf = (path: readonly (string | number)[]) =>
  path.reduce<string>(
    (out, part) => (typeof part === "number" ? `${out}[${part}]` : `${out}.${part}`),
    "body",
  );

/**
 * JSON bodies are parsed by moneyq's own rules (installJsonBodyParser), each problem a 400
 * naming the field.
 */
export function installJsonParser(app: FastifyInstance): void {
  installJsonBodyParser(app, (problem) => {
    const field = fieldOf(problem.path);
    return new ApiError("invalid_body", `${field}: ${problem.rule}`, {
      details: [{ field, rule: problem.rule }],
    });
  });
}

/** True when the client closed the connection: nothing to answer, nothing the service did wrong. */
export function clientWentAway(request: FastifyRequest, error: { code?: string }): boolean {
  if (error.code === "ECONNRESET" || error.code === "ERR_STREAM_PREMATURE_CLOSE") return true;
  // An upload cut off mid-body: the request never arrived whole.
  return request.raw.destroyed && !request.raw.complete;
}

/** Ids and the account a mutating call acted on, for its audit line. */
export type AuditFields = Readonly<Record<string, string | number | boolean | undefined>>;

interface RequestState {
  caller?: Caller;
  audit?: AuditFields;
}

const states = new WeakMap<object, RequestState>();
const stateOf = (request: FastifyRequest): RequestState => {
  let state = states.get(request.raw);
  if (!state) {
    state = {};
    states.set(request.raw, state);
  }
  return state;
};

export const setCaller = (request: FastifyRequest, caller: Caller) => {
  stateOf(request).caller = caller;
};
export const callerOf = (request: FastifyRequest): Caller | undefined => stateOf(request).caller;
export const recordAudit = (request: FastifyRequest, fields: AuditFields) => {
  stateOf(request).audit = { ...stateOf(request).audit, ...fields };
};

/**
 * One info line per mutating call, answered or refused: the token's name (never the token),
 * the route, the status, the account and the ids the handler recorded. A call refused for
 * its token (401) has no token name: its line names the remote address instead.
 */
export function writeAuditLine(
  logger: Logger,
  action: string,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const { caller, audit } = stateOf(request);
  const route = `${request.method} ${request.routeOptions.url}`;
  if (!caller) {
    logger.info(
      { audit: action, route, status: reply.statusCode, remoteAddress: request.ip },
      `audit: ${action} by an unauthenticated caller answered ${reply.statusCode}`,
    );
    return;
  }
  logger.info(
    {
      audit: action,
      token: caller.name,
      route,
      status: reply.statusCode,
      ...audit,
    },
    `audit: ${action} by ${caller.name} answered ${reply.statusCode}`,
  );
}

const CLIENT_ERRORS: Record<string, readonly [ApiErrorCode, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: ["request_timeout", "the request did not arrive in time"],
  HPE_HEADER_OVERFLOW: ["headers_too_large", "the request headers are too large"],
};

/**
 * Errors Node raises before a request reaches the router (a request or its headers too slow,
 * headers too large, a malformed request line): answered in moneyq's shape, then closed.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const [code, message] = CLIENT_ERRORS[error.code ?? ""] ?? [
    "bad_request",
    "the request is not valid HTTP",
  ];
  const answer = new ApiError(code, message);
  const { status } = answer;
  const body = JSON.stringify(answer.body());
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  socket.destroy();
}
