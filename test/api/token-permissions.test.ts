import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiApp, AuthRouteSpec } from "../../src/api/api-app.js";
import { PERMISSIONS, type Permission } from "../../src/config/load-config.js";
import { createLogger } from "../../src/logger.js";
import { until, useService } from "../helpers/service.js";
import { serviceApi } from "../helpers/service-api.js";

const tokenOf = (holds: "all-but" | "only", permission: Permission) =>
  `tok_${holds}_${permission}_0123456789abcdef`;

// Per permission, a token with every other one and a token with that one alone, both over
// every account (resuming webhooks needs a token of every account).
const h = useService({
  MONEYQ_API_TOKENS: JSON.stringify(
    PERMISSIONS.flatMap((p) => [
      {
        name: `all-but-${p}`,
        token: tokenOf("all-but", p),
        accounts: ["alpha", "beta"],
        permissions: PERMISSIONS.filter((q) => q !== p),
      },
      {
        name: `only-${p}`,
        token: tokenOf("only", p),
        accounts: ["alpha", "beta"],
        permissions: [p],
      },
    ]),
  ),
});

let api: ReturnType<typeof serviceApi>;
let router: ApiApp;
beforeAll(async () => {
  api = serviceApi(h);
  router = api.router;
  // The route files load as plugins: the route table is full once the app is ready.
  await router.app.ready();
});
afterAll(() => api.close());

const authenticated = () => router.routes.filter((r): r is AuthRouteSpec => r.auth);

/** A value each path parameter accepts, so that a permitted call reaches its handler. */
const SAMPLE_PARAMS: Record<string, string> = {
  batchId: "perm-batch",
  jobId: `j_${"0".repeat(40)}`,
  alias: "alpha",
  eventId: "1-0",
};

const call = (route: AuthRouteSpec, token: string, extra: { body?: string; type?: string } = {}) =>
  router.app.inject({
    method: route.method,
    url: route.url.replace(/:([A-Za-z]+)/g, (_, name: string) => SAMPLE_PARAMS[name] ?? "x"),
    headers: {
      authorization: `Bearer ${token}`,
      ...(extra.type !== undefined && { "content-type": extra.type }),
    },
    ...(extra.body !== undefined && { payload: extra.body }),
  });

describe("token permissions", () => {
  it("refuse every authenticated route to a token without its permission, 403 naming it", async () => {
    expect(authenticated().length).toBeGreaterThanOrEqual(16);
    for (const route of authenticated()) {
      const name = `${route.method} ${route.url}`;
      const refused = await call(route, tokenOf("all-but", route.permission));
      expect(refused.statusCode, name).toBe(403);
      expect(refused.json(), name).toEqual({
        error: {
          code: "forbidden",
          message: `this token lacks the "${route.permission}" permission (${name} needs it)`,
          details: [
            { field: "authorization", rule: `token needs the ${route.permission} permission` },
          ],
        },
      });
      const allowed = await call(route, tokenOf("only", route.permission));
      expect(allowed.statusCode, `${name}: ${allowed.body}`).not.toBe(403);
      expect(allowed.statusCode, name).not.toBe(401);
    }
  });

  it("ask read of every GET under /v1 and of nothing else", () => {
    for (const route of authenticated())
      expect(route.permission === "read", `${route.method} ${route.url}`).toBe(
        route.method === "GET" && route.url.startsWith("/v1/"),
      );
  });

  it("refuse before the body is read: a malformed body without the permission is a 403", async () => {
    const route = (url: string) =>
      authenticated().find((r) => r.method === "POST" && r.url === url) as AuthRouteSpec;
    const job = await call(route("/v1/jobs"), tokenOf("all-but", "submit"), {
      body: '{"kind": ',
      type: "application/json",
    });
    expect(job.statusCode).toBe(403);
    const batch = await call(route("/v1/batches"), tokenOf("only", "read"), {
      body: "not,a\nbatch",
      type: "text/csv",
    });
    expect(batch.statusCode).toBe(403);
    expect(batch.json().error.message).toContain('lacks the "submit" permission');
  });

  it("audit a refused mutating call under the token's name", async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const text of chunk.toString("utf8").split("\n"))
          if (text.trim() !== "") lines.push(JSON.parse(text));
        done();
      },
    });
    const logged = serviceApi(h, { logger: createLogger("info", sink) });
    try {
      const refused = await logged.router.app.inject({
        method: "POST",
        url: "/v1/accounts/alpha/pause",
        headers: { authorization: `Bearer ${tokenOf("only", "read")}` },
      });
      expect(refused.statusCode).toBe(403);
      // onResponse writes the line once the answer is out: a moment after inject has it.
      const line = await until(
        async () => lines.find((l) => l.audit === "account_pause"),
        (found) => found !== undefined,
        5_000,
      );
      expect(line).toMatchObject({
        token: "only-read",
        route: "POST /v1/accounts/:alias/pause",
        status: 403,
      });
      expect(JSON.stringify(lines)).not.toContain(tokenOf("only", "read"));
    } finally {
      await logged.close();
    }
  });

  it("are stated by the OpenAPI document for each authenticated operation", async () => {
    const doc = (await router.app.inject({ method: "GET", url: "/openapi.json" })).json();
    for (const route of router.routes) {
      if (route.documented === false) continue;
      const operation =
        doc.paths[route.url.replace(/:([A-Za-z]+)/g, "{$1}")][route.method.toLowerCase()];
      if (!route.auth) {
        expect(operation["x-moneyq-permission"], route.url).toBeUndefined();
        continue;
      }
      expect(operation["x-moneyq-permission"], route.url).toBe(route.permission);
      expect(operation.description).toBe(
        `Needs a token with the \`${route.permission}\` permission.`,
      );
      expect(operation.responses["403"].description).toContain(`\`${route.permission}\``);
    }
  });
});
