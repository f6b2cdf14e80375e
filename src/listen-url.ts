import type { Server } from "node:http";

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
