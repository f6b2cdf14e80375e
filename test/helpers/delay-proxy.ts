import { connect, createServer, type Server, type Socket } from "node:net";

/** A TCP proxy in front of one server that holds back every chunk of its replies. */
export interface DelayProxy {
  /** `redis://127.0.0.1:<port>` style address of the proxy, with the target's scheme and path. */
  readonly url: string;
  readonly port: number;
  /** Sets the delay of every reply chunk read from now on (ms); chunks keep their order. */
  setDelay(ms: number): void;
  /** Stops listening and closes every connection. Idempotent. */
  close(): Promise<void>;
}

/** One chunk of a reply and when it may be passed on. */
interface Held {
  readonly chunk: Buffer;
  readonly at: number;
}

/**
 * Listens on a free port of 127.0.0.1 and forwards each connection to `targetUrl` (host and port
 * of a `redis://` or `http://` URL). Requests go through at once; each chunk the target answers
 * is passed back `delayMs` after it was read, in the order read, so a client sees the target as
 * that much further away (a real network path, not a mocked client). The delay can change while
 * connections are open: a chunk never overtakes the one before it.
 */
export async function startDelayProxy(targetUrl: string, delayMs = 0): Promise<DelayProxy> {
  const target = new URL(targetUrl);
  let delay = delayMs;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    // No Nagle: a small write held for the last one's acknowledgement would add tens of ms.
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    sockets.add(client);
    sockets.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    client.pipe(upstream);
    holdBack(upstream, client, () => delay);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  const url = new URL(targetUrl);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  let closed: Promise<void> | undefined;
  return {
    url: url.toString().replace(/\/$/, ""),
    port,
    setDelay(ms) {
      delay = ms;
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
        sockets.clear();
      });
      return closed;
    },
  };
}

/** Copies `from` to `to`, each chunk `delay()` ms after it was read, in order. */
function holdBack(from: Socket, to: Socket, delay: () => number): void {
  const queue: Held[] = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    const now = performance.now();
    while (queue.length > 0 && (queue[0] as Held).at <= now) {
      if (!to.destroyed) to.write((queue.shift() as Held).chunk);
      else queue.shift();
    }
    schedule();
  };
  const schedule = () => {
    if (timer !== undefined || queue.length === 0) return;
    timer = setTimeout(flush, Math.max(0, (queue[0] as Held).at - performance.now()));
  };
  from.on("data", (chunk: Buffer) => {
    const now = performance.now();
    // With no delay and nothing held, at once: a timer would add a millisecond.
    if (queue.length === 0 && delay() <= 0) {
      if (!to.destroyed) to.write(chunk);
      return;
    }
    // Never before the chunk ahead of it, even when the delay was just shortened.
    queue.push({ chunk, at: Math.max(now + delay(), queue.at(-1)?.at ?? 0) });
    schedule();
  });
  from.on("close", () => {
    if (timer !== undefined) clearTimeout(timer);
  });
}
