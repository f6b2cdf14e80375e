import { Pool } from "undici";

export interface LoadResult {
  readonly requests: number;
  readonly seconds: number;
  readonly perSecond: number;
  readonly non2xx: number;
}

export interface LoadRequest {
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: (i: number) => string;
}

/** Keeps `concurrency` requests in flight for `seconds`, a bounded loop on loopback. */
export async function runLoad(
  baseUrl: string,
  request: LoadRequest,
  seconds: number,
  concurrency: number,
): Promise<LoadResult> {
  const url = new URL(baseUrl);
  const pool = new Pool(url.origin, { connections: concurrency });
  let requests = 0;
  let non2xx = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const i = requests;
      const res = await pool.request({
        path: `${url.pathname}${request.path}`,
        method: request.method,
        headers: request.headers,
        body: request.body ? request.body(i) : null,
      });
      await res.body.dump();
      requests += 1;
      if (res.statusCode >= 300) non2xx += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  return { requests, seconds: elapsed, perSecond: requests / elapsed, non2xx };
}
