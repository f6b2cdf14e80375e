import { listenApp } from "../listen-url.js";
import { type ApiApp, createApiRouter } from "./api-app.js";
import type { ApiDeps } from "./api-deps.js";
import { registerBatchRoutes } from "./batch-routes.js";
import { registerConsoleRoutes } from "./console-routes.js";
import { registerHoldRoutes } from "./hold-routes.js";
import { registerJobRoutes } from "./job-routes.js";
import { registerOperatorRoutes } from "./operator-routes.js";
import { registerResolutionRoutes } from "./resolution-routes.js";
import { registerSystemRoutes } from "./system-routes.js";
import { registerWebhookRoutes } from "./webhook-routes.js";

export interface RunningApi {
  /** http://host:port of the API. */
  readonly url: string;
  /** Stops accepting requests and waits for those in flight. Idempotent. */
  close(): Promise<void>;
}

/**
 * Builds the API (not listening): every route, one error shape. Each route file is an
 * encapsulated Fastify plugin, in the public scope or the token scope, whose hooks authenticate
 * and audit. Its `app` is the Fastify app; its `routes`, the route table.
 */
export function buildApi(deps: ApiDeps): ApiApp {
  const api = createApiRouter(deps);
  let closing = false;
  api.app.addHook("onClose", async () => {
    closing = true;
  });
  api.register("public", [
    (router) => registerSystemRoutes(router, () => closing),
    registerConsoleRoutes,
  ]);
  api.register("token", [
    registerJobRoutes,
    registerResolutionRoutes,
    registerHoldRoutes,
    registerBatchRoutes,
    registerOperatorRoutes,
    registerWebhookRoutes,
  ]);
  return api;
}

/** Starts the API on `host:port` (port 0: a free one). */
export async function startApi(
  deps: ApiDeps,
  listen: { host: string; port: number },
): Promise<RunningApi> {
  return listenApp(buildApi(deps).app, listen);
}
