import Fastify from "fastify";
import type { Registry } from "prom-client";
import { listenApp } from "../listen-url.js";

export interface MetricsServerOptions {
  readonly registry: Registry;
  readonly host: string;
  /** 0: any free port. */
  readonly port: number;
}

export interface RunningMetricsServer {
  readonly url: string;
  /** Idempotent. */
  close(): Promise<void>;
}

/**
 * `GET /metrics` (and `GET /healthz`) of a worker-only process, which has no API, so that
 * every moneyq process can be scraped.
 */
export async function startMetricsServer(
  options: MetricsServerOptions,
): Promise<RunningMetricsServer> {
  const app = Fastify({ logger: false });
  app.get("/metrics", async (_request, reply) =>
    reply.type(options.registry.contentType).send(await options.registry.metrics()),
  );
  app.get("/healthz", async () => ({ status: "ok" }));
  return listenApp(app, { host: options.host, port: options.port });
}
