import type { FastifyReply } from "fastify";
import { SandboxError } from "./sandbox-error.js";

export function errorBody(error: SandboxError) {
  return {
    success: false,
    message: error.message,
    code: error.code,
    ...(error.errors !== undefined && { errors: error.errors }),
  };
}

/** Every non-success answer, in the spec's error envelope. */
export function sendError(reply: FastifyReply, error: SandboxError): FastifyReply {
  return reply.code(error.status).headers(error.headers).send(errorBody(error));
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
    return new SandboxError(415, "unsupported_media_type", "body: must be application/json");
  }
  if (status === 400) {
    return new SandboxError(400, "validation_error", "body: malformed JSON", {
      errors: [{ field: "body", rule: "malformed JSON" }],
    });
  }
  return new SandboxError(500, "internal_error", "internal sandbox error");
}
