import type { Server } from "node:http";
import { createServer } from "node:net";
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

/** Why a server could not listen on `host:port`: which of the two is wrong, and the rule. */
export interface ListenProblem {
  readonly part: "host" | "port";
  readonly rule: string;
}

/**
 * Listens on `host:port` and closes again at once: what would stop the server from listening
 * there (the port in use, a host that is not this machine's), found before anything else starts.
 * Undefined when it can listen.
 */
export function listenProblem(host: string, port: number): Promise<ListenProblem | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", (error: NodeJS.ErrnoException) => resolve(problemOf(error, host, port)));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

function problemOf(error: NodeJS.ErrnoException, host: string, port: number): ListenProblem {
  const where = `${host}:${port}`;
  switch (error.code) {
    case "EADDRINUSE":
      return { part: "port", rule: `${where} is in use by another process` };
    case "EACCES":
      return { part: "port", rule: `listening on ${where} is not permitted to this user` };
    case "EADDRNOTAVAIL":
      return { part: "host", rule: `${host} is not an address of this machine` };
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return { part: "host", rule: `${host} does not resolve to an address` };
    default:
      return { part: "host", rule: `cannot listen on ${where} (${error.code ?? error.message})` };
  }
}
