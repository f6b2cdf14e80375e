import { describe, expect, it } from "vitest";
import { createApiRouter } from "../../src/api/api-app.js";
import type { ApiDeps } from "../../src/api/api-deps.js";
import { PaymentsNotFoundError } from "../../src/client/errors.js";
import { createLogger } from "../../src/logger.js";
import { ReplayConflictError } from "../../src/queues/replay-conflict-error.js";

/** An API with no parts: these routes touch none, and no token is accepted. */
function emptyApi() {
  const deps = { tokens: [], logger: createLogger("silent") } as unknown as ApiDeps;
  return createApiRouter(deps);
}

describe("route scopes", () => {
  it("refuse, when the API is built, a token route outside the token scope", async () => {
    const api = emptyApi();
    api.register("public", [
      (router) =>
        router.add(
          { method: "GET", url: "/v1/leak", summary: "x", auth: true, permission: "read" },
          async () => ({ leaked: true }),
        ),
    ]);
    await expect(api.app.ready()).rejects.toThrow("GET /v1/leak: auth true in the public scope");
    await api.app.close();
  });

  it("refuse a public route inside the token scope", async () => {
    const api = emptyApi();
    api.register("token", [
      (router) =>
        router.add({ method: "GET", url: "/open", summary: "x", auth: false }, async () => ({})),
    ]);
    await expect(api.app.ready()).rejects.toThrow("GET /open: auth false in the token scope");
    await api.app.close();
  });

  it("authenticate every route of the token scope, and no public route", async () => {
    const api = emptyApi();
    let handled = 0;
    api.register("public", [
      (router) =>
        router.add({ method: "GET", url: "/healthz", summary: "x", auth: false }, async () => {
          handled++;
          return { status: "ok" };
        }),
    ]);
    api.register("token", [
      (router) =>
        router.add(
          { method: "GET", url: "/v1/secret", summary: "x", auth: true, permission: "read" },
          async () => {
            handled++;
            return { secret: true };
          },
        ),
      (router) =>
        router.add(
          { method: "POST", url: "/v1/other", summary: "x", auth: true, permission: "submit" },
          async () => {
            handled++;
            return {};
          },
        ),
    ]);
    const open = await api.app.inject({ method: "GET", url: "/healthz" });
    expect(open.statusCode).toBe(200);
    for (const [method, url] of [
      ["GET", "/v1/secret"],
      ["POST", "/v1/other"],
    ] as const) {
      const refused = await api.app.inject({
        method,
        url,
        headers: { authorization: "Bearer nope" },
      });
      expect(refused.statusCode).toBe(401);
      expect(refused.json()).toMatchObject({ error: { code: "unauthenticated" } });
    }
    // The HEAD route Fastify adds beside each GET is behind the same hooks.
    const head = await api.app.inject({ method: "HEAD", url: "/v1/secret" });
    expect(head.statusCode).toBe(401);
    expect(handled).toBe(1);
    expect(api.routes.map((r) => r.url)).toEqual(["/healthz", "/v1/secret", "/v1/other"]);
    await api.app.close();
  });

  it("answer a domain error by its code and status, and the provider's own not-found as a 500", async () => {
    const api = emptyApi();
    api.register("public", [
      (router) =>
        router.add({ method: "GET", url: "/conflict", summary: "x", auth: false }, async () => {
          throw new ReplayConflictError("j_1", "its job is still queued");
        }),
      (router) =>
        router.add({ method: "GET", url: "/upstream", summary: "x", auth: false }, async () => {
          throw new PaymentsNotFoundError({
            message: "provider: no such transaction",
            operation: "getTransaction",
            status: 404,
            upstreamCode: undefined,
            body: undefined,
            requestId: undefined,
            mayHaveReachedServer: true,
          });
        }),
    ]);
    const conflict = await api.app.inject({ method: "GET", url: "/conflict" });
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json()).toMatchObject({
      error: {
        code: "replay_conflict",
        message: "j_1 cannot be replayed: its job is still queued",
      },
    });
    const upstream = await api.app.inject({ method: "GET", url: "/upstream" });
    expect(upstream.statusCode).toBe(500);
    expect(upstream.json()).toMatchObject({ error: { code: "internal_error" } });
    await api.app.close();
  });
});
