import { z } from "zod";
import type { Permission } from "../config/load-config.js";
import type { RouteSpec } from "./api-app.js";

const jsonSchema = (schema: z.ZodType) =>
  z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;

const ERROR_RESPONSE = {
  description: "An error: { error: { code, message, details?, rows?, jobId?, repeats? } }",
  content: {
    "application/json": {
      schema: {
        type: "object",
        required: ["error"],
        properties: {
          error: {
            type: "object",
            required: ["code", "message"],
            properties: {
              code: { type: "string" },
              message: { type: "string" },
              details: {
                type: "array",
                items: {
                  type: "object",
                  properties: { field: { type: "string" }, rule: { type: "string" } },
                },
              },
              rows: { type: "array", items: { type: "object" } },
              jobId: { type: "string" },
              repeats: { type: "array", items: { type: "object" } },
            },
          },
        },
      },
    },
  },
};

/** The 403 of an authenticated route: its token lacks the permission, or an account. */
const forbidden = (permission: Permission) => ({
  ...ERROR_RESPONSE,
  description: `forbidden: the token lacks the \`${permission}\` permission, or may not act on the accounts involved`,
});

function parameters(spec: RouteSpec): unknown[] {
  const out: unknown[] = [];
  for (const [where, schema] of [
    ["path", spec.params],
    ["query", spec.query],
    ["header", spec.headers],
  ] as const) {
    if (!schema) continue;
    const json = jsonSchema(schema) as {
      properties?: Record<string, unknown>;
      required?: string[];
    };
    for (const [name, property] of Object.entries(json.properties ?? {}))
      out.push({
        name,
        in: where,
        required: where === "path" || (json.required ?? []).includes(name),
        schema: property,
      });
  }
  return out;
}

/** The OpenAPI 3.1 document of the API, generated from the routes' zod schemas. */
export function openApiDocument(routes: readonly RouteSpec[], version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of routes) {
    if (spec.documented === false) continue;
    const path = spec.url.replace(/:([A-Za-z]+)/g, "{$1}");
    const content: Record<string, unknown> = {};
    if (spec.body) content["application/json"] = { schema: jsonSchema(spec.body) };
    for (const type of spec.bodyTypes ?? []) content[type] = { schema: { type: "string" } };
    paths[path] ??= {};
    (paths[path] as Record<string, unknown>)[spec.method.toLowerCase()] = {
      summary: spec.summary,
      ...(spec.auth && {
        description: `Needs a token with the \`${spec.permission}\` permission.`,
        security: [{ bearer: [] }],
        "x-moneyq-permission": spec.permission,
      }),
      parameters: parameters(spec),
      ...(Object.keys(content).length > 0 && { requestBody: { content } }),
      responses: {
        "200": { description: "Success" },
        ...(spec.method === "POST" && { "202": { description: "Accepted: enqueued" } }),
        ...(spec.auth && { "403": forbidden(spec.permission) }),
        default: ERROR_RESPONSE,
      },
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "moneyq API",
      version,
      description:
        "Enqueue payouts, funding and exchange jobs and bulk batches; watch, cancel and replay them.",
    },
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    paths,
  };
}
