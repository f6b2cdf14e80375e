import type { Socket } from "node:net";
import Fastify, { type FastifyInstance } from "fastify";
import { installJsonBodyParser } from "../contract/json-body-parser.js";
import { registerApiRoutes } from "./api-routes.js";
import { CONTROL_PATH, registerControlRoutes } from "./control-routes.js";
import type { SandboxDialect } from "./dialect.js";
import { sendError, toSandboxError } from "./envelope-reply.js";
import {
  isReversedStatusWord,
  REVERSED_STATUS_RULE,
  SANDBOX_DEFAULTS,
  type SandboxOptions,
} from "./options.js";
import { SandboxControl } from "./sandbox-control.js";
import { SandboxError } from "./sandbox-error.js";

export const SANDBOX_BASE_PATH = "/v1";

export interface RunningSandbox {
  /** Base address of the Payments API, ending in /v1. */
  readonly baseUrl: string;
  /** Base address of the control API. */
  readonly controlUrl: string;
  /** The key of the first seeded account. */
  readonly apiKey: string;
  readonly accounts: readonly { readonly accountId: string; readonly apiKey: string }[];
  /** The control operations, in process (the same as the HTTP control API). */
  readonly control: SandboxControl;
  /** Stops listening and drops hung requests; safe to call more than once. */
  close(): Promise<void>;
}

/** Builds the sandbox's HTTP app without listening (benchmarks and embedding use it). */
export function buildSandboxApp(
  control: SandboxControl,
  options: {
    bodyLimitBytes: number;
    hung: Set<Socket>;
    dialect?: SandboxDialect;
    rejectRepeatedKeys?: boolean;
  },
): FastifyInstance {
  const minimal = options.dialect?.kind === "spec-minimal";
  const app = Fastify({
    logger: false,
    bodyLimit: options.bodyLimitBytes,
    // Long ids must reach validation, which names the field and its limit.
    routerOptions: { maxParamLength: 2048 },
    // Errors the router raises before any route (bad URL encoding, ...) get the envelope too.
    frameworkErrors: (error, _request, reply) => sendError(reply, toSandboxError(error), minimal),
  });
  // JSON only, by the contract's rules (nesting, digits, prototype keys): text/plain is a 415.
  installJsonBodyParser(app, (problem) => {
    const field = ["body", ...problem.path].join(".");
    return new SandboxError(400, "validation_error", `${field}: ${problem.rule}`, {
      errors: [{ field, rule: problem.rule }],
    });
  });
  let requests = 0;
  app.addHook("onRequest", (_request, reply, done) => {
    requests += 1;
    reply.header("x-request-id", `req_${requests.toString(36)}`);
    done();
  });
  app.setErrorHandler((error, _request, reply) => sendError(reply, toSandboxError(error), minimal));
  app.setNotFoundHandler((request, reply) =>
    sendError(
      reply,
      new SandboxError(404, "not_found", `no route ${request.method} ${request.url.split("?")[0]}`),
      minimal,
    ),
  );
  registerApiRoutes(app, control, {
    basePath: SANDBOX_BASE_PATH,
    bodyLimitBytes: options.bodyLimitBytes,
    hung: options.hung,
    ...(options.dialect && { dialect: options.dialect }),
    rejectRepeatedKeys: options.rejectRepeatedKeys === true,
  });
  registerControlRoutes(app, control);
  return app;
}

function dialectOf(options: SandboxOptions): SandboxDialect {
  if (options.specMinimal && options.profile)
    throw new TypeError("startSandbox: give a profile or specMinimal, not both");
  if (options.specMinimal) return { kind: "spec-minimal" };
  return options.profile ? { kind: "profile", profile: options.profile } : { kind: "default" };
}

/** Starts a sandbox on a real port (default: a free one on 127.0.0.1). */
export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const settleDelayMs = options.settleDelayMs ?? SANDBOX_DEFAULTS.settleDelayMs;
  const reversedStatus = options.reversedStatus ?? SANDBOX_DEFAULTS.reversedStatus;
  if (!isReversedStatusWord(reversedStatus))
    throw new TypeError(`startSandbox: reversedStatus ${REVERSED_STATUS_RULE}`);
  const control = new SandboxControl({
    settleDelayMs,
    reverseAfterMs: options.reverseAfterMs ?? settleDelayMs,
    reversalStyle: options.reversalStyle ?? SANDBOX_DEFAULTS.reversalStyle,
    reversedStatus,
    idempotencyTtlMs: options.idempotencyTtlMs ?? SANDBOX_DEFAULTS.idempotencyTtlMs,
    seed: options.seed ?? SANDBOX_DEFAULTS.seed,
    requestLogSize: options.requestLogSize ?? SANDBOX_DEFAULTS.requestLogSize,
  });
  const accounts = (options.accounts ?? SANDBOX_DEFAULTS.accounts).map((seed) =>
    control.createAccount(seed),
  );
  const hung = new Set<Socket>();
  const app = buildSandboxApp(control, {
    bodyLimitBytes: options.bodyLimitBytes ?? SANDBOX_DEFAULTS.bodyLimitBytes,
    hung,
    dialect: dialectOf(options),
    rejectRepeatedKeys: options.rejectRepeatedKeys === true,
  });
  const host = options.host ?? SANDBOX_DEFAULTS.host;
  await app.listen({ host, port: options.port ?? SANDBOX_DEFAULTS.port });
  const address = app.server.address();
  if (!address || typeof address !== "object") throw new Error("sandbox: no listening address");
  const origin = `http://${host.includes(":") ? `[${host}]` : host}:${address.port}`;
  let closing: Promise<void> | undefined;
  return {
    baseUrl: `${origin}${SANDBOX_BASE_PATH}`,
    controlUrl: `${origin}${CONTROL_PATH}`,
    apiKey: accounts[0]?.apiKey ?? "",
    accounts,
    control,
    close() {
      closing ??= (async () => {
        for (const socket of hung) socket.destroy();
        await app.close();
      })();
      return closing;
    },
  };
}
