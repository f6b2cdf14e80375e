import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** When it arrived (Date.now()). */
  readonly at: number;
}

/** How the server answers one request; `hang` never answers, `drop` destroys the socket. */
export type Reply =
  | {
      readonly status: number;
      readonly body?: unknown;
      readonly raw?: string;
      readonly headers?: Record<string, string>;
    }
  | { readonly hang: true }
  | { readonly drop: true };

export interface ScriptedServer {
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  /** How many requests answered `hang` saw their client close the connection. */
  abandoned(): number;
  /**
   * Sets how the next requests are answered (the last reply repeats); a function answers each
   * request as it arrives, given it and the requests before it.
   */
  reply(
    next: Reply | ((request: RecordedRequest, earlier: readonly RecordedRequest[]) => Reply),
  ): void;
  close(): Promise<void>;
}

/** A real HTTP server on a free loopback port that records requests and answers as told. */
export async function startScriptedServer(): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let abandoned = 0;
  let current: Reply | ((request: RecordedRequest, earlier: readonly RecordedRequest[]) => Reply) =
    {
      status: 200,
      body: { success: true, message: "ok", data: {} },
    };
  const server: Server = createServer((req, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const request = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        at: Date.now(),
      };
      const reply = typeof current === "function" ? current(request, [...requests]) : current;
      requests.push(request);
      if ("hang" in reply) {
        res.once("close", () => {
          if (!res.writableEnded) abandoned += 1;
        });
        return;
      }
      if ("drop" in reply) {
        req.socket.destroy();
        return;
      }
      res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
      res.end(reply.raw ?? (reply.body === undefined ? "" : JSON.stringify(reply.body)));
    });
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/api/v1`,
    requests,
    abandoned: () => abandoned,
    reply(next) {
      current = next;
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
