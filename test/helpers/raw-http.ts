import { connect } from "node:net";

export interface RawAnswer {
  /** 0 when the server closed the connection without an answer. */
  readonly status: number;
  // biome-ignore lint/suspicious/noExplicitAny: answers are inspected field by field
  readonly body: any;
  /** Body bytes the client managed to send before the answer or the close. */
  readonly sent: number;
  /** From the first byte sent to the answer or the close. */
  readonly ms: number;
}

/**
 * One HTTP/1.1 request over a plain socket, its body written `chunk` bytes every `everyMs`
 * (0: as fast as the socket drains) until `total` bytes are sent or the server answers or
 * closes. Lets a test send what no polite client sends: a huge or a crawling body.
 */
export function rawRequest(
  url: string,
  options: {
    method: string;
    path: string;
    headers: Record<string, string>;
    total: number;
    chunk: number;
    everyMs: number;
    /** Give up (and report status 0) after this long. */
    limitMs: number;
  },
): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let sent = 0;
    let received = "";
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(limit);
      socket.destroy();
      const [head = "", ...rest] = received.split("\r\n\r\n");
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      let body: unknown;
      try {
        body = JSON.parse(rest.join("\r\n\r\n"));
      } catch {
        body = undefined;
      }
      resolve({ status, body, sent, ms: Date.now() - started });
    };
    const limit = setTimeout(finish, options.limitMs);
    socket.on("data", (data) => {
      received += data.toString("utf8");
      const end = received.indexOf("\r\n\r\n");
      const length = /content-length: (\d+)/i.exec(received.slice(0, end))?.[1];
      if (end >= 0 && length !== undefined && received.length >= end + 4 + Number(length)) finish();
    });
    socket.on("close", finish);
    socket.on("error", finish);
    const payload = Buffer.alloc(options.chunk, 0x20);
    const writeMore = () => {
      while (!finished && sent < options.total) {
        const n = Math.min(options.chunk, options.total - sent);
        sent += n;
        const more = socket.write(payload.subarray(0, n));
        if (options.everyMs > 0) {
          setTimeout(writeMore, options.everyMs);
          return;
        }
        if (!more) {
          socket.once("drain", writeMore);
          return;
        }
      }
    };
    socket.on("connect", () => {
      const head = [
        `${options.method} ${options.path} HTTP/1.1`,
        `host: ${hostname}:${port}`,
        `content-length: ${options.total}`,
        ...Object.entries(options.headers).map(([k, v]) => `${k}: ${v}`),
      ];
      socket.write(`${head.join("\r\n")}\r\n\r\n`);
      writeMore();
    });
  });
}
