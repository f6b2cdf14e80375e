import { readFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "../helpers/wait-until.js";
import { ROOT } from "./podman.js";

/** The first five payouts of the demo's bank batch: enough to see a batch paid end to end. */
export const BATCH_CSV = `${readFileSync(join(ROOT, "examples/demo-bank-payouts.csv"), "utf8")
  .split("\n")
  .slice(0, 6)
  .join("\n")}\n`;
export const BATCH_ROWS = 5;

export interface Answer {
  readonly status: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers of several routes
  readonly body: any;
}

/** GET or POST through the HTTP API; a connection refused reads as status 0. */
export async function call(
  url: string,
  options: { token?: string; body?: string; contentType?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.contentType) headers["content-type"] = options.contentType;
  try {
    const response = await fetch(url, {
      headers,
      ...(options.body === undefined ? {} : { method: "POST", body: options.body }),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    const json = response.headers.get("content-type")?.includes("json");
    return { status: response.status, body: json ? JSON.parse(text) : text };
  } catch (error) {
    return { status: 0, body: String(error) };
  }
}

/** Waits until `/readyz` answers ready, naming the last answer and the log if it never does. */
export async function waitReady(apiUrl: string, log: () => string): Promise<Answer> {
  return waitFor(
    () => call(`${apiUrl}/readyz`),
    (answer) => answer.status === 200 && answer.body?.status === "ready",
    120_000,
    (last) => `${apiUrl}/readyz to answer ready (last: ${JSON.stringify(last)}); log:\n${log()}`,
    500,
  );
}

export interface PaidBatch {
  readonly batchId: string;
  /** `GET /v1/batches/{id}` once the batch finished. */
  // biome-ignore lint/suspicious/noExplicitAny: the batch status as the API answers it
  readonly status: any;
  /** The report's rows (`result`, `upstream_id`, ...), from `?format=csv`. */
  readonly rows: Record<string, string>[];
}

/** Submits BATCH_CSV, waits for the batch to finish, and reads its status and report. */
export async function payBatch(apiUrl: string, token: string): Promise<PaidBatch> {
  const submitted = await call(`${apiUrl}/v1/batches?kind=payout.bank`, {
    token,
    body: BATCH_CSV,
    contentType: "text/csv",
  });
  if (submitted.status !== 202)
    throw new Error(`the batch was not accepted: ${JSON.stringify(submitted)}`);
  const batchId: string = submitted.body.batchId;
  const finished = await waitFor(
    () => call(`${apiUrl}/v1/batches/${batchId}`, { token }),
    (answer) => answer.status === 200 && answer.body.finished === BATCH_ROWS,
    120_000,
    (last) => `every row of batch ${batchId} to finish (last: ${JSON.stringify(last.body)})`,
    250,
  );
  const report = await call(`${apiUrl}/v1/batches/${batchId}/results?format=csv`, { token });
  const lines = String(report.body)
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"));
  const [header = "", ...data] = lines;
  const names = header.split(",");
  const rows = data.map((line) =>
    Object.fromEntries(line.split(",").map((cell, i) => [names[i] ?? String(i), cell])),
  );
  return { batchId, status: finished.body, rows };
}
