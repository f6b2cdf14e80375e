import type { FastifyReply } from "fastify";
import { SandboxError } from "./sandbox-error.js";

/**
 * The spec's error envelope. `minimal` keeps only what spec 2.1 shows (`success`, `message`):
 * a provider need not say `code` or `errors`, so the client must not depend on them.
 */
export function errorBody(error: SandboxError, minimal = false) {
  if (minimal) return { success: false, message: error.message };
  return {
    success: false,
    message: error.message,
    code: error.code,
    ...(error.errors !== undefined && { errors: error.errors }),
  };
}

/** Every non-success answer, in the spec's error envelope. */
export function sendError(reply: FastifyReply, error: SandboxError, minimal = false): FastifyReply {
  return reply.code(error.status).headers(error.headers).send(errorBody(error, minimal));
}

/** Maps fastify's own errors (body parsing, limits) and anything unexpected into the envelope. */
export function toSandboxError(error: unknown): SandboxError {
  if (error instanceof SandboxError) return error;
  const code = (error as { code?: string }).code;
  const status = (error as { statusCode?: number }).statusCode;
  if (code === "FST_ERR_CTP_BODY_TOO_LARGE" || status === 413) {
    return new SandboxError(413, "payload_too_large", "body: larger than the sandbox accepts");
  }
  if (code === "FST_ERR_CTP_INVALID_MEDIA_TYPE" || status === 415) {
    return new SandboxError(415, "unsupported_media_type", "body: must be application/json", {
      errors: [{ field: "content-type", rule: "must be application/json" }],
    });
  }
  if (code === "FST_ERR_MAX_PARAM_LENGTH") {
    return new SandboxError(400, "validation_error", "path: a path parameter is too long", {
      errors: [{ field: "path", rule: "each path parameter at most 2048 characters" }],
    });
  }
  if (code === "FST_ERR_BAD_URL") {
    return new SandboxError(400, "validation_error", "path: not a valid URL encoding", {
      errors: [{ field: "path", rule: "not a valid URL encoding" }],
    });
  }
  if (status === 400) {
    return new SandboxError(400, "validation_error", "body: malformed JSON", {
      errors: [{ field: "body", rule: "malformed JSON" }],
    });
  }
  return new SandboxError(500, "internal_error", "internal sandbox error");
}
