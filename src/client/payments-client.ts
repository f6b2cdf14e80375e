import { type Dispatcher, Pool } from "undici";
import type { z } from "zod";
import { successEnvelope } from "../contract/envelope.js";
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
import { toAnswerError } from "./answer-error.js";
import { PaymentsResponseError } from "./errors.js";
import { CLIENT_DEFAULTS, type PaymentsClientOptions } from "./options.js";
import { toTransportError } from "./transport-error.js";

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

export type OperationData<O extends OperationSpec> = z.output<O["data"]>;

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

const ENVELOPES = new Map<OperationId, z.ZodType>(
  OPERATION_IDS.map((id) => [id, successEnvelope(operations[id].data)]),
);

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
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #requestTimeoutMs: number;
  readonly #maxResponseBytes: number;
  readonly #userAgent: string;
  #closed: Promise<void> | undefined;

  constructor(options: PaymentsClientOptions) {
    const url = parseBaseUrl(options.baseUrl);
    if (typeof options.apiKey !== "string" || options.apiKey.length === 0) {
      throw new TypeError("PaymentsClient: apiKey must be a non-empty string");
    }
    this.#origin = url.origin;
    this.#basePath = url.pathname.replace(/\/$/, "");
    this.#apiKey = options.apiKey;
    this.#requestTimeoutMs = options.requestTimeoutMs ?? CLIENT_DEFAULTS.requestTimeoutMs;
    this.#maxResponseBytes = options.maxResponseBytes ?? CLIENT_DEFAULTS.maxResponseBytes;
    this.#userAgent = options.userAgent ?? CLIENT_DEFAULTS.userAgent;
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#dispatcher =
      options.dispatcher ??
      new Pool(url.origin, {
        connections: options.connections ?? CLIENT_DEFAULTS.connections,
        connect: { timeout: options.connectTimeoutMs ?? CLIENT_DEFAULTS.connectTimeoutMs },
        keepAliveTimeout: options.keepAliveTimeoutMs ?? CLIENT_DEFAULTS.keepAliveTimeoutMs,
        headersTimeout: this.#requestTimeoutMs,
        bodyTimeout: this.#requestTimeoutMs,
      });
  }

  /** Calls operation `id`; the typed methods are shorthands for this. */
  async call<K extends OperationId>(
    id: K,
    input: OperationInput<Operations[K]>,
  ): Promise<OperationData<Operations[K]>> {
    const op: OperationSpec = operations[id];
    const raw = input as RawInput;
    const headers: Record<string, string> = {
      [API_KEY_HEADER]: this.#apiKey,
      accept: "application/json",
      "user-agent": this.#userAgent,
    };
    if (op.idempotent) {
      if (!raw.idempotencyKey) throw new TypeError(`${id}: idempotencyKey is required`);
      headers[IDEMPOTENCY_HEADER] = raw.idempotencyKey;
    }
    let body: string | null = null;
    if (op.body) {
      body = JSON.stringify(raw.body ?? {});
      headers["content-type"] = "application/json";
    }
    const path = this.#basePath + fillPath(id, op.path, raw.params) + toQueryString(raw.query);

    let status: number;
    let answerHeaders: Record<string, string | string[] | undefined>;
    let text: string;
    try {
      const response = await this.#dispatcher.request({
        origin: this.#origin,
        path,
        method: op.method,
        headers,
        body,
        headersTimeout: this.#requestTimeoutMs,
        bodyTimeout: this.#requestTimeoutMs,
      });
      status = response.statusCode;
      answerHeaders = response.headers;
      text = await readCapped(response.body, this.#maxResponseBytes, id);
    } catch (error) {
      if (error instanceof PaymentsResponseError) throw error;
      throw toTransportError(error, id);
    }
    const redacted = this.#redact(text);
    const parsed = parseJson(redacted);
    const requestId = firstHeader(answerHeaders[REQUEST_ID_HEADER]);
    if (status >= 200 && status < 300) {
      const envelope = (ENVELOPES.get(id) as z.ZodType).safeParse(parsed);
      if (envelope.success) return (envelope.data as { data: OperationData<Operations[K]> }).data;
      throw new PaymentsResponseError({
        operation: id,
        status,
        body: parsed,
        requestId,
        mayHaveReachedServer: true,
        message: `${id}: HTTP ${status} but the body is not the expected success envelope`,
      });
    }
    throw toAnswerError({
      operation: id,
      status,
      body: parsed,
      requestId,
      retryAfter: firstHeader(answerHeaders[RETRY_AFTER_HEADER]),
    });
  }

  /** Closes the client's own connection pool; safe to call more than once. */
  close(): Promise<void> {
    this.#closed ??= this.#ownsDispatcher ? this.#dispatcher.close() : Promise.resolve();
    return this.#closed;
  }

  #redact(text: string): string {
    return text.split(this.#apiKey).join("[REDACTED]");
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
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) {
      body.destroy();
      throw new PaymentsResponseError({
        operation,
        mayHaveReachedServer: true,
        message: `${operation}: response body larger than ${max} bytes`,
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

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
