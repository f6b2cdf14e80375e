import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type FieldIssue, formatFieldIssues, validate } from "../contract/field-issues.js";
import {
  API_KEY_HEADER,
  IDEMPOTENCY_HEADER,
  IdempotentHeaders,
  REPLAY_HEADER,
  RETRY_AFTER_HEADER,
} from "../contract/headers.js";
import { parseJsonText } from "../contract/json-text.js";
import {
  OPERATION_IDS,
  type OperationId,
  type OperationSpec,
  operations,
} from "../contract/operations.js";
import { foreignNameIssues, translateRequest } from "../provider/requests.js";
import { canonicalJson } from "./canonical-json.js";
import { inDialect, type SandboxDialect } from "./dialect.js";
import { toSandboxError } from "./envelope-reply.js";
import { type HandlerInput, handlers } from "./handlers.js";
import { LIVE_KEY_PREFIX, SANDBOX_KEY_PREFIX } from "./options.js";
import type { AccountRecord } from "./records.js";
import type { SandboxControl } from "./sandbox-control.js";
import { SandboxError } from "./sandbox-error.js";

const ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
const SERVER_ERROR_MESSAGES: Record<number, string> = {
  500: "internal server error (injected fault)",
  502: "bad gateway (injected fault)",
  503: "service unavailable (injected fault)",
};

export interface ApiRouteOptions {
  readonly basePath: string;
  readonly bodyLimitBytes: number;
  /** Sockets of hung requests, destroyed on close. */
  readonly hung: Set<Socket>;
  /** The shape of requests and answers (default: the contract's). */
  readonly dialect?: SandboxDialect;
  /** Refuse a repeated idempotency key with a 400 instead of replaying (SandboxOptions). */
  readonly rejectRepeatedKeys?: boolean;
}

/** Registers every operation of the contract's table under `basePath`, and 405s for other methods. */
export function registerApiRoutes(
  app: FastifyInstance,
  control: SandboxControl,
  options: ApiRouteOptions,
): void {
  // The log stamps a request when it arrives, as a provider's rate limiter counts it: not after
  // its body is parsed and due transactions settle.
  app.addHook("onRequest", (request, _reply, done) => {
    arrivals.set(request.raw, control.state.clock.now());
    done();
  });
  const methodsByPath = new Map<string, Set<string>>();
  for (const id of OPERATION_IDS) {
    const op: OperationSpec = operations[id];
    const url = options.basePath + op.path.replace(/\{(\w+)\}/g, ":$1");
    methodsByPath.set(url, (methodsByPath.get(url) ?? new Set()).add(op.method));
    app.route({
      method: op.method,
      url,
      handler: (request, reply) => handle(control, options, id, op, request, reply),
    });
  }
  for (const [url, allowed] of methodsByPath) {
    const others = ALL_METHODS.filter((m) => !allowed.has(m));
    app.route({
      method: others,
      url,
      handler: async () => {
        throw new SandboxError(
          405,
          "method_not_allowed",
          `method not allowed; use ${[...allowed].join(", ")}`,
          {
            headers: { allow: [...allowed].join(", ") },
          },
        );
      },
    });
  }
}

function authenticate(control: SandboxControl, header: unknown): AccountRecord {
  const key = typeof header === "string" ? header : undefined;
  if (!key) throw new SandboxError(401, "unauthorized", `missing ${API_KEY_HEADER} header`);
  if (key.startsWith(LIVE_KEY_PREFIX)) {
    throw new SandboxError(
      401,
      "unauthorized",
      "a production key was sent to the sandbox; use a sandbox key (sk_sandbox_...)",
    );
  }
  const account = control.state.accountsByKey.get(key);
  if (!account) {
    const form = key.startsWith(SANDBOX_KEY_PREFIX)
      ? "unknown sandbox API key"
      : "API key is not a sandbox key";
    throw new SandboxError(401, "unauthorized", form);
  }
  return account;
}

function validationError(issues: readonly FieldIssue[]): SandboxError {
  return new SandboxError(400, "validation_error", formatFieldIssues(issues), { errors: issues });
}

async function readGetBody(raw: IncomingMessage, limit: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of raw as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit)
      throw new SandboxError(413, "payload_too_large", "body: larger than the sandbox accepts");
    chunks.push(chunk);
  }
  const parsed = parseJsonText(Buffer.concat(chunks).toString("utf8"));
  if (parsed.ok) return parsed.value;
  if (parsed.problem.rule.startsWith("not valid JSON")) throw toSandboxError({ statusCode: 400 });
  const field = ["body", ...parsed.problem.path].join(".");
  throw validationError([{ field, rule: parsed.problem.rule }]);
}

function parseInput(
  op: OperationSpec,
  params: unknown,
  query: unknown,
  body: unknown,
): HandlerInput<never> {
  const issues: FieldIssue[] = [];
  const part = (schema: OperationSpec["body"], value: unknown, prefix: string) => {
    if (!schema) return undefined;
    const result = validate(schema, value ?? (prefix === "body" ? undefined : {}));
    if (result.success) return result.data;
    for (const i of result.issues) issues.push({ field: i.field || prefix, rule: i.rule });
    return undefined;
  };
  const input = {
    params: part(op.params, params, "path"),
    query: part(op.query, query, "query"),
    body: part(op.body, body, "body"),
  };
  if (issues.length > 0) throw validationError(issues);
  return input as HandlerInput<never>;
}

/** When each request arrived, on the sandbox's clock. */
const arrivals = new WeakMap<object, number>();

const arrivedAt = (control: SandboxControl, request: FastifyRequest): number =>
  arrivals.get(request.raw) ?? control.state.clock.now();

/**
 * Logs the request under the account its key names (none when the key is unknown); returns its
 * place in the log.
 */
function recordRequest(control: SandboxControl, request: FastifyRequest): number {
  const keyHeader = request.headers[API_KEY_HEADER];
  const idempotencyKey = request.headers[IDEMPOTENCY_HEADER];
  return control.log.record({
    at: arrivedAt(control, request),
    accountId:
      typeof keyHeader === "string"
        ? (control.state.accountsByKey.get(keyHeader)?.accountId ?? null)
        : null,
    method: request.method,
    path: request.url,
    ...(typeof idempotencyKey === "string" && { idempotencyKey }),
  });
}

type Faults = ReturnType<SandboxControl["faultsOf"]>;

/** The account's faults before any work: its rate limit, a hang (true), an injected 5xx. */
function injectFaults(
  control: SandboxControl,
  account: AccountRecord,
  faults: Faults,
  seq: number,
): boolean {
  const limit = faults?.settings.rateLimitPerSecond;
  if (limit !== undefined) {
    const wait = control.limiter.check(account.accountId, limit, control.state.clock.now());
    if (wait !== undefined) {
      control.log.markRateLimited(seq);
      throw new SandboxError(
        429,
        "rate_limited",
        `rate limit of ${limit} requests per second exceeded`,
        {
          headers: {
            [RETRY_AFTER_HEADER]: String(faults?.settings.rateLimitRetryAfterSeconds ?? wait),
          },
        },
      );
    }
  }
  if (faults?.hang()) return true;
  const injected = faults?.error();
  if (injected !== undefined) {
    throw new SandboxError(
      injected,
      injected === 503 ? "service_unavailable" : "internal_error",
      SERVER_ERROR_MESSAGES[injected] as string,
    );
  }
  return false;
}

/** The request in our names: a dialect's names translated back, then validated. */
async function readRequest(
  options: ApiRouteOptions,
  id: OperationId,
  op: OperationSpec,
  request: FastifyRequest,
) {
  const rawBody =
    op.method === "GET" && op.body
      ? await readGetBody(request.raw, options.bodyLimitBytes)
      : request.body;
  const dialect = options.dialect ?? { kind: "default" };
  const received = {
    params: request.params as Record<string, unknown>,
    query: request.query as Record<string, unknown>,
    body: rawBody,
  };
  let parts = received;
  if (dialect.kind === "profile") {
    const unknown = foreignNameIssues(dialect.profile, id, received);
    if (unknown.length > 0) throw validationError(unknown);
    parts = translateRequest(dialect.profile, id, received, true) as typeof received;
  }
  return { rawBody, input: parseInput(op, parts.params, parts.query, parts.body) };
}

/**
 * Begins an idempotent request under its key: the key, or the first answer replayed. With
 * `rejectRepeatedKeys`, any key seen before is refused with a 400, as some providers do.
 */
function beginKey(
  control: SandboxControl,
  options: ApiRouteOptions,
  account: AccountRecord,
  op: OperationSpec,
  request: FastifyRequest,
  rawBody: unknown,
): { readonly key: string } | { readonly replay: { status: number; body: unknown } } {
  // The contract's header schema; x-api-key was settled by authentication already.
  const headers = validate(IdempotentHeaders, request.headers);
  if (!headers.success) throw validationError(headers.issues);
  const key = headers.data[IDEMPOTENCY_HEADER] as string;
  const fingerprint = createHash("sha256")
    .update(canonicalJson([op.method, op.path, request.params, request.query, rawBody ?? null]))
    .digest("base64url");
  const begun = control.idempotency.begin(account.accountId, key, fingerprint);
  if (begun.kind !== "new" && options.rejectRepeatedKeys) {
    throw new SandboxError(
      400,
      "validation_error",
      "idempotency key: this key was already used; send a new request with a new key",
    );
  }
  if (begun.kind === "in_flight") {
    throw new SandboxError(
      409,
      "idempotency_in_flight",
      "a request with this idempotency key is still in progress; retry later",
    );
  }
  if (begun.kind === "mismatch") {
    throw new SandboxError(
      422,
      "idempotency_key_reused",
      "this idempotency key was already used with a different request",
    );
  }
  if (begun.kind === "replay") return { replay: begun.answer };
  return { key };
}

async function handle(
  control: SandboxControl,
  options: ApiRouteOptions,
  id: OperationId,
  op: OperationSpec,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const { state } = control;
  state.settleDue();
  const seq = recordRequest(control, request);
  const account = authenticate(control, request.headers[API_KEY_HEADER]);
  const faults = control.faultsOf(account.accountId);
  if (injectFaults(control, account, faults, seq)) {
    reply.hijack();
    options.hung.add(request.raw.socket);
    return;
  }
  const { rawBody, input } = await readRequest(options, id, op, request);

  let key: string | null = null;
  if (op.idempotent) {
    const begun = beginKey(control, options, account, op, request, rawBody);
    if ("replay" in begun) {
      reply.code(begun.replay.status).header(REPLAY_HEADER, "true").send(begun.replay.body);
      return;
    }
    key = begun.key;
  }

  let body: unknown;
  try {
    const delay = faults?.latencyMs() ?? 0;
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    state.settleDue();
    const data = (handlers[id] as (s: typeof state, c: unknown, i: unknown) => unknown)(
      state,
      { account, idempotencyKey: key },
      input,
    );
    body = {
      success: true,
      message: op.summary,
      data: inDialect(options.dialect ?? { kind: "default" }, id, data, op.method === "POST"),
    };
  } catch (error) {
    if (key !== null) control.idempotency.abandon(account.accountId, key);
    throw error;
  }
  if (key !== null) control.idempotency.complete(account.accountId, key, { status: 200, body });
  // Only a request with an effect can commit; a lookup has nothing to drop after.
  if (op.method === "POST" && faults?.dropAfterCommit()) {
    reply.hijack();
    request.raw.socket.destroy();
    return;
  }
  reply.code(200).send(body);
}
