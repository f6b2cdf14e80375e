import type { ApiRouter } from "./api-app.js";
import { openApiDocument } from "./openapi.js";

export const API_VERSION = "1.0.0";

/** Liveness, readiness, Prometheus metrics and the OpenAPI document: no token needed. */
export function registerSystemRoutes(router: ApiRouter, isClosing: () => boolean): void {
  const { registry, readiness } = router.deps;

  router.add(
    { method: "GET", url: "/healthz", summary: "Liveness: the process answers", auth: false },
    async () => ({ status: "ok" }),
  );

  router.add(
    {
      method: "GET",
      url: "/readyz",
      summary: "Readiness: Redis reachable, workers running, not shutting down (503 otherwise)",
      auth: false,
    },
    async ({ reply }) => {
      const state = await readiness();
      const shuttingDown = state.shuttingDown || isClosing();
      const ready = state.redis && state.workers !== false && !shuttingDown;
      return reply
        .code(ready ? 200 : 503)
        .send({ status: ready ? "ready" : "not_ready", ...state, shuttingDown });
    },
  );

  router.add(
    { method: "GET", url: "/metrics", summary: "Prometheus metrics of this process", auth: false },
    async ({ reply }) => reply.type(registry.contentType).send(await registry.metrics()),
  );

  router.add(
    { method: "GET", url: "/openapi.json", summary: "This document", auth: false },
    async () => openApiDocument(router.routes, API_VERSION),
  );
}
