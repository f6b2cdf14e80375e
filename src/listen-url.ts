import type { Server } from "node:http";
import type { FastifyInstance } from "fastify";

/** The address a client on this host uses to reach a server listening on `host:port`. */
export function reachableUrl(host: string, port: number): string {
  const reachable = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  return `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${port}`;
}

/** The address of `server`, listening on `host` (port 0 resolved to the one it got). */
export function listenUrl(server: Server, host: string): string {
  const address = server.address();
  return reachableUrl(host, address && typeof address === "object" ? address.port : 0);
}

/** A Fastify app listening: where it is reached, and a close that may be called any number of times. */
export interface ListeningApp {
  readonly url: string;
  /** Stops accepting requests and waits for those in flight. Idempotent. */
  close(): Promise<void>;
}

/** Starts `app` on `host:port` (port 0: a free one). */
export async function listenApp(
  app: FastifyInstance,
  listen: { host: string; port: number },
): Promise<ListeningApp> {
  await app.listen(listen);
  let closed: Promise<void> | undefined;
  return {
    url: listenUrl(app.server, listen.host),
    close() {
      closed ??= app.close();
      return closed;
    },
  };
}
