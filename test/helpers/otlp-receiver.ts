import { createServer, type IncomingHttpHeaders } from "node:http";
import { afterAll, beforeAll } from "vitest";

export interface OtlpReceiver {
  /** The OTLP base URL (spans go to `${url}/v1/traces`). */
  readonly url: string;
  /** Each export's raw body, as received. */
  readonly bodies: string[];
  /** Each export's request headers. */
  readonly headers: IncomingHttpHeaders[];
}

/** A plain OTLP/HTTP receiver on a free port for one test file: keeps every POST /v1/traces. */
export function useOtlpReceiver(): OtlpReceiver {
  const bodies: string[] = [];
  const headers: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      body += chunk;
    });
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404).end();
        return;
      }
      bodies.push(body);
      headers.push(req.headers);
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  let url = "";
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    get url() {
      return url;
    },
    bodies,
    headers,
  };
}
