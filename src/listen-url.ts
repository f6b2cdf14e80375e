import type { Server } from "node:http";

/** The address a client uses to reach `server`, listening on `host` (0.0.0.0: loopback). */
export function listenUrl(server: Server, host: string): string {
  const address = server.address();
  const port = address && typeof address === "object" ? address.port : 0;
  const reachable = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  return `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${port}`;
}
