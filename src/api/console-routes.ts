import { readdirSync, readFileSync } from "node:fs";
import { extname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyReply } from "fastify";
import { z } from "zod";
import type { ApiRouter } from "./api-app.js";
import { notFound } from "./api-error.js";

/** The console's files: the package's `console/` folder, beside `dist/` and `src/`. */
export const CONSOLE_DIR = fileURLToPath(new URL("../../console/", import.meta.url));

/** The path below /console/ (the router's wildcard); `send` serves only the console's own files. */
const ConsoleParams = z.object({ "*": z.string() });

const TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
};

/**
 * The page may load only its own files and talk only to this API: no inline script, no other
 * origin, no framing. The bearer token it holds can then leave only to this API.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

interface Asset {
  readonly type: string;
  readonly body: Buffer;
}

/** Every console file by its path under /console/, read once when the API is built. */
export function consoleAssets(dir: string = CONSOLE_DIR): ReadonlyMap<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const type = TYPES[extname(entry.name)];
    if (!entry.isFile() || type === undefined) continue;
    const path = join(entry.parentPath, entry.name);
    assets.set(relative(dir, path).split("\\").join("/"), { type, body: readFileSync(path) });
  }
  return assets;
}

/**
 * The operator console: static files, no token needed to load them (they hold no data); every
 * call the page makes goes to the API with the token the operator signs in with.
 */
export function registerConsoleRoutes(router: ApiRouter): void {
  const assets = consoleAssets();
  const send = (reply: FastifyReply, path: string) => {
    const asset = assets.get(path);
    if (asset === undefined) throw notFound(`console file ${path}`);
    return reply
      .type(asset.type)
      .header("content-security-policy", CONTENT_SECURITY_POLICY)
      .header("x-content-type-options", "nosniff")
      .header("referrer-policy", "no-referrer")
      .header("x-frame-options", "DENY")
      .header("cache-control", "no-cache")
      .send(asset.body);
  };
  router.add(
    {
      method: "GET",
      url: "/console",
      summary: "The operator console",
      auth: false,
      documented: false,
    },
    async ({ reply }) => send(reply, "index.html"),
  );
  router.add(
    {
      method: "GET",
      url: "/console/*",
      summary: "The operator console's files",
      auth: false,
      documented: false,
      params: ConsoleParams,
    },
    async ({ reply, params }) => {
      const path = params["*"];
      return send(reply, path === "" ? "index.html" : path);
    },
  );
}
