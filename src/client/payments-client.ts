import { type Dispatcher, Pool } from "undici";
import type { z } from "zod";
import {
  API_KEY_HEADER,
  IDEMPOTENCY_HEADER,
  REQUEST_ID_HEADER,
  RETRY_AFTER_HEADER,
} from "../contract/headers.js";
import {
  OPERATION_IDS,
  type OperationId,
  type OperationSpec,
  type Operations,
  operations,
  pathParamNames,
} from "../contract/operations.js";
import { AdapterFailure, type ProviderAdapter, type Refusal } from "../provider/adapter.js";
import { DEFAULT_PROVIDER_PROFILE, type ProviderProfile } from "../provider/profile.js";
import { type RawRefusal, refusalMeaning } from "../provider/refusals.js";
import { type RequestParts, shapeRequest } from "../provider/requests.js";
import { toAnswerError, type UpstreamAnswer } from "./answer-error.js";
import {
  type DefiniteAnswer,
  PaymentsConnectionError,
  type PaymentsError,
  PaymentsInvalidRequestError,
  PaymentsResponseError,
} from "./errors.js";
import { CLIENT_DEFAULTS, type PaymentsClientOptions } from "./options.js";
import { SecretRedactor } from "./redact-secret.js";
import {
  checkIdempotencyKey,
  checkPathSegment,
  checkSendable,
  HEADER_FIELDS,
  HEADER_VALUE_RULE,
  isSendableHeaderValue,
} from "./request-check.js";
import { toTransportError } from "./transport-error.js";
import { NotWrittenByDeadline, writtenBy } from "./written-by.js";

type QueryPart<O> = O extends { query: infer Q extends z.ZodType }
  ? Record<string, never> extends z.input<Q>
    ? { readonly query?: z.input<Q> }
    : { readonly query: z.input<Q> }
  : unknown;

/** What a call of operation O takes: its path params, query, body and, for IDEM, the key. */
export type OperationInput<O extends OperationSpec> = (O extends {
  params: infer P extends z.ZodType;
}
  ? { readonly params: z.input<P> }
  : unknown) &
  QueryPart<O> &
  (O extends { body: infer B extends z.ZodType } ? { readonly body: z.input<B> } : unknown) &
  (O extends { idempotent: true } ? { readonly idempotencyKey: string } : unknown);

/**
 * The contract's documented view of an operation's `data` (what our sandbox answers). A
 * provider chooses its own fields (spec 2.1 shows none): the client returns `data` as
 * received, so read it through a provider profile, not by trusting this type.
 */
export type OperationData<O extends OperationSpec> = z.output<O["data"]>;

/** A 2xx answer as the spec promises it: the envelope's message and its `data` as received. */
export interface EnvelopeAnswer {
  readonly message: string;
  /** The envelope's `data`; `{}` when the provider left it out. */
  readonly data: unknown;
}

type InputArgs<O extends OperationSpec> =
  Record<string, never> extends OperationInput<O>
    ? [input?: OperationInput<O>]
    : [input: OperationInput<O>];

/** One typed method per operation of the contract's table. */
export type OperationMethods = {
  [K in OperationId]: (...args: InputArgs<Operations[K]>) => Promise<OperationData<Operations[K]>>;
};

interface RawInput {
  readonly params?: Record<string, unknown>;
  readonly query?: Record<string, unknown>;
  readonly body?: unknown;
  readonly idempotencyKey?: string;
}

/** The typed methods, installed on the prototype from the operation table below. */
export interface PaymentsClient extends OperationMethods {}

/**
 * A typed client for the whole Payments API. It makes exactly one attempt per call and throws
 * a `PaymentsError` subclass on anything but success; retrying is the queue's job.
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: see the interface above.
export class PaymentsClient {
  readonly #origin: string;
  readonly #basePath: string;
  readonly #apiKey: string;
  readonly #redactor: SecretRedactor;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #requestTimeoutMs: number;
  readonly #maxResponseBytes: number;
  readonly #userAgent: string;
  /** How this client's provider names what the spec leaves unshown. */
  readonly profile: ProviderProfile;
  /** Code for what the profile cannot say (docs/provider-profile.md, "An adapter"). */
  readonly adapter: ProviderAdapter | undefined;
  #closed: Promise<void> | undefined;
  #destroyed: Promise<void> | undefined;

  constructor(options: PaymentsClientOptions) {
    const url = parseBaseUrl(options.baseUrl);
    if (typeof options.apiKey !== "string" || options.apiKey.length === 0) {
      throw new TypeError("PaymentsClient: apiKey must be a non-empty string");
    }
    if (!isSendableHeaderValue(options.apiKey)) {
      throw new TypeError(`PaymentsClient: apiKey ${HEADER_VALUE_RULE}`);
    }
    this.#origin = url.origin;
    this.#basePath = url.pathname.replace(/\/$/, "");
    this.#apiKey = options.apiKey;
    this.#redactor = new SecretRedactor(options.apiKey);
    this.#requestTimeoutMs = options.requestTimeoutMs ?? CLIENT_DEFAULTS.requestTimeoutMs;
    this.#maxResponseBytes = options.maxResponseBytes ?? CLIENT_DEFAULTS.maxResponseBytes;
    this.#userAgent = options.userAgent ?? CLIENT_DEFAULTS.userAgent;
    this.profile = options.profile ?? DEFAULT_PROVIDER_PROFILE;
    this.adapter = options.adapter;
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#dispatcher =
      options.dispatcher ??
      new Pool(url.origin, {
        connections: options.connections ?? CLIENT_DEFAULTS.connections,
        connect: { timeout: options.connectTimeoutMs ?? CLIENT_DEFAULTS.connectTimeoutMs },
        keepAliveTimeout: options.keepAliveTimeoutMs ?? CLIENT_DEFAULTS.keepAliveTimeoutMs,
        headersTimeout: this.#requestTimeoutMs,
        bodyTimeout: this.#requestTimeoutMs,
        // HTTP/1.1 only (undici 8 would offer h2 to an https provider): whether a failed request
        // may have reached the provider is read from HTTP/1.1's transport errors.
        allowH2: false,
      });
  }

  /** Calls operation `id` and returns the answer's `data`; the typed methods are shorthands for this. */
  async call<K extends OperationId>(
    id: K,
    input: OperationInput<Operations[K]>,
  ): Promise<OperationData<Operations[K]>> {
    return (await this.send(id, input)).data as OperationData<Operations[K]>;
  }

  /**
   * Calls operation `id` and returns the whole success envelope. A 2xx is checked only for what
   * the spec promises (`success`, `message`, `data` an object or absent): it is a definite answer.
   * `signal` abandons the request: before it leaves (still connecting), nothing is sent; after,
   * its answer is lost and the request may have had its effect. `sendBy` (`performance.now()`)
   * is the latest the request may be written to its connection: one that could only be written
   * later is not sent (a `PaymentsConnectionError` whose `mayHaveReachedServer` is false).
   */
  async send<K extends OperationId>(
    id: K,
    input: OperationInput<Operations[K]>,
    options: {
      readonly signal?: AbortSignal | undefined;
      readonly sendBy?: number | undefined;
    } = {},
  ): Promise<EnvelopeAnswer> {
    // A closed pool would fail the request in a way that reads as "may have reached the server".
    if (this.closed) {
      throw new PaymentsConnectionError({
        operation: id,
        mayHaveReachedServer: false,
        message: `${id}: the client is closed; the request was not sent`,
      });
    }
    const op: OperationSpec = operations[id];
    const raw = { ...(input as RawInput), ...this.#shape(id, input as RawInput) };
    const headers: Record<string, string> = {
      [API_KEY_HEADER]: this.#apiKey,
      accept: "application/json",
      "user-agent": this.#userAgent,
    };
    if (op.idempotent) {
      checkIdempotencyKey(id, raw.idempotencyKey);
      headers[IDEMPOTENCY_HEADER] = raw.idempotencyKey as string;
    }
    checkSendable(id, headers, HEADER_FIELDS);
    let body: string | null = null;
    if (op.body) {
      body = JSON.stringify(raw.body ?? {});
      headers["content-type"] = "application/json";
    }
    const path = this.#basePath + fillPath(id, op.path, raw.params) + toQueryString(raw.query);

    const { sendBy } = options;
    // Past already: refused here, before a pooled connection is taken (and closed by the abort).
    if (sendBy !== undefined && performance.now() > sendBy)
      throw toTransportError(new NotWrittenByDeadline(), id);
    const dispatcher =
      sendBy === undefined ? this.#dispatcher : this.#dispatcher.compose(writtenBy(sendBy));
    let response: Dispatcher.ResponseData;
    try {
      response = await dispatcher.request({
        origin: this.#origin,
        path,
        method: op.method,
        headers,
        body,
        headersTimeout: this.#requestTimeoutMs,
        bodyTimeout: this.#requestTimeoutMs,
        ...(options.signal !== undefined && { signal: options.signal }),
      });
    } catch (error) {
      throw toTransportError(error, id);
    }
    const status = response.statusCode;
    const answerHeaders = response.headers;
    let text: string;
    try {
      text = await readCapped(response.body, this.#maxResponseBytes, id, status);
    } catch (error) {
      if (error instanceof PaymentsResponseError) throw error;
      // The status arrived: whatever failed while reading, the request reached the server.
      throw toTransportError(error, id, true);
    }
    // Parsed first, redacted after: the key may occur in the JSON's own syntax. Only the
    // redacted body, message and data leave this method.
    const parsed = parseJson(text);
    const requestId = this.#redactor.header(firstHeader(answerHeaders[REQUEST_ID_HEADER]));
    const answer: UpstreamAnswer = {
      operation: id,
      status,
      body: this.#redactor.body(text, parsed),
      readable: parsed,
      redact: (value) => this.#redactor.text(value),
      requestId,
      retryAfter: firstHeader(answerHeaders[RETRY_AFTER_HEADER]),
    };
    // A 2xx carrying the error envelope is the provider's refusal, as a 4xx is (spec 2.1).
    if (status >= 200 && status < 300 && !isErrorEnvelope(parsed))
      return this.#success(id, status, text, parsed, requestId);
    throw this.#refusal(answer);
  }

  /** Our request in the provider's names: the adapter's shape, else the profile's. */
  #shape(id: OperationId, input: RawInput): RequestParts {
    try {
      return shapeRequest(this.profile, id, input, this.adapter);
    } catch (error) {
      if (!(error instanceof AdapterFailure)) throw error;
      throw new PaymentsInvalidRequestError({
        operation: id,
        field: "request",
        rule: error.message,
      });
    }
  }

  /**
   * The error a refusal (or a failure) is. An adapter that fails to say what a refusal means
   * leaves it unreadable: reconciliation, never a resend.
   */
  #refusal(answer: UpstreamAnswer): PaymentsError {
    const meaningOf = (refusal: Refusal, raw: RawRefusal) =>
      refusalMeaning(this.profile, refusal, this.adapter, raw);
    try {
      return toAnswerError(answer, meaningOf);
    } catch (error) {
      if (!(error instanceof AdapterFailure)) throw error;
      const said = isObject(answer.body) ? answer.body.message : undefined;
      return responseError(answer.operation, answer.status, answer.body, answer.requestId, {
        message: typeof said === "string" ? said : "",
        data: {},
        unreadable: error.message,
      });
    }
  }

  /**
   * A 2xx read for what the spec promises, from the unredacted body; returned redacted. One
   * saying `success: true` in an otherwise malformed body is still definite: the error says so.
   */
  #success(
    id: OperationId,
    status: number,
    text: string,
    parsed: unknown,
    requestId: string | undefined,
  ): EnvelopeAnswer {
    const answer = readEnvelope(parsed);
    if (answer) {
      try {
        return {
          message: this.#redactor.text(answer.message),
          data: this.#redactor.value(answer.data),
        };
      } catch {
        throw responseError(id, status, this.#redactor.text(text), requestId, {
          message: "",
          data: {},
          unreadable: "its data is nested too deeply to read",
        });
      }
    }
    const body = this.#redactor.body(text, parsed);
    const said = isObject(parsed) && parsed.success === true;
    const definiteAnswer = said ? readDefinite(body) : undefined;
    throw responseError(id, status, body, requestId, definiteAnswer);
  }

  /** True once close() or destroy() was called: every later call fails without sending. */
  get closed(): boolean {
    return this.#closed !== undefined;
  }

  /** Closes the client's own connection pool; safe to call more than once. */
  close(): Promise<void> {
    this.#closed ??= this.#ownsDispatcher ? this.#dispatcher.close() : Promise.resolve();
    return this.#closed;
  }

  /** Closes at once: requests in flight or waiting for a connection fail. Safe to call more than once. */
  destroy(): Promise<void> {
    if (!this.#ownsDispatcher) return Promise.resolve();
    this.#destroyed ??= this.#dispatcher.destroy().catch(() => undefined);
    this.#closed ??= this.#destroyed;
    return this.#destroyed;
  }
}

for (const id of OPERATION_IDS) {
  Object.defineProperty(PaymentsClient.prototype, id, {
    value: function (this: PaymentsClient, input?: unknown) {
      return this.call(id, (input ?? {}) as never);
    },
    writable: true,
    configurable: true,
  });
}

function parseBaseUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError("PaymentsClient: baseUrl must be an absolute http(s) URL ending in /v1");
  }
  if (!/^https?:$/.test(url.protocol) || !/\/v1\/?$/.test(url.pathname)) {
    throw new TypeError("PaymentsClient: baseUrl must be an absolute http(s) URL ending in /v1");
  }
  return url;
}

function fillPath(id: string, template: string, params: Record<string, unknown> | undefined) {
  let path = template;
  for (const name of pathParamNames(template)) {
    const value = params?.[name];
    if (typeof value !== "string" || value.length === 0) {
      throw new TypeError(`${id}: path parameter ${name} must be a non-empty string`);
    }
    checkPathSegment(id, name, value);
    path = path.replace(`{${name}}`, encodeURIComponent(value));
  }
  return path;
}

function toQueryString(query: Record<string, unknown> | undefined): string {
  if (!query) return "";
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) search.append(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

async function readCapped(
  body: AsyncIterable<Buffer> & { destroy(): unknown },
  max: number,
  operation: string,
  status: number,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) {
      body.destroy();
      // A 2xx is definite whatever its size: its data is unreadable, never a reason to resend.
      const success = status >= 200 && status < 300;
      throw new PaymentsResponseError({
        operation,
        status,
        mayHaveReachedServer: true,
        message: `${operation}: HTTP ${status} with a body larger than ${max} bytes`,
        ...(success && {
          definiteAnswer: {
            message: "",
            data: {},
            unreadable: `its body is larger than ${max} bytes`,
          },
        }),
      });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function parseJson(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Spec 2.1's error envelope: `success: false` and a message. */
function isErrorEnvelope(parsed: unknown): boolean {
  return isObject(parsed) && parsed.success === false && typeof parsed.message === "string";
}

/** Spec 2.1's success envelope, and nothing more: `data` is the provider's to shape. */
function readEnvelope(parsed: unknown): EnvelopeAnswer | undefined {
  if (!isObject(parsed)) return undefined;
  const { success, message, data } = parsed;
  if (success !== true || typeof message !== "string") return undefined;
  if (data === undefined) return { message, data: {} };
  if (!isObject(data)) return undefined;
  return { message, data };
}

/** What a malformed `success: true` body (already redacted) still says. */
function readDefinite(body: unknown): DefiniteAnswer {
  const { message, data } = isObject(body) ? body : {};
  return {
    message: typeof message === "string" ? message : "",
    data: data ?? {},
  };
}

function responseError(
  operation: string,
  status: number,
  body: unknown,
  requestId: string | undefined,
  definiteAnswer: DefiniteAnswer | undefined,
): PaymentsResponseError {
  return new PaymentsResponseError({
    operation,
    status,
    body,
    requestId,
    mayHaveReachedServer: true,
    message: `${operation}: HTTP ${status} but the body is not the expected success envelope`,
    ...(definiteAnswer && { definiteAnswer }),
  });
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
