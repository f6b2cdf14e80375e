import { Readable, Transform } from "node:stream";
import {
  BatchFileError,
  BatchNotCancellableError,
  BatchRefusedError,
} from "../batches/batch-errors.js";
import type { BatchKind } from "../batches/batch-kinds.js";
import { csvRows, jsonRows } from "../batches/batch-rows.js";
import { renderReport } from "../batches/report-format.js";
import { validate } from "../contract/field-issues.js";
import type { ApiRouter } from "./api-app.js";
import { ApiError, invalidRequest, notFound } from "./api-error.js";
import { accountOf, type Caller } from "./auth.js";
import { BatchParams, ResultsQuery, SubmitBatchBody, SubmitBatchQuery } from "./request-schemas.js";

interface SubmitQuery {
  readonly kind: BatchKind;
  readonly account?: string | undefined;
  readonly dryRun?: boolean | undefined;
  readonly allowPartial?: boolean | undefined;
  readonly batchId?: string | undefined;
}

/** Bulk batches: submit (JSON or CSV, dry run, partial), status, results, cancel. */
export function registerBatchRoutes(router: ApiRouter): void {
  const { batches } = router.deps;

  /** The batch if it belongs to one of the caller's accounts; 404 otherwise, never 403. */
  const ownBatch = async (caller: Caller, batchId: string) => {
    const account = await batches.accountOf(batchId);
    if (account === undefined || !caller.accounts.includes(account))
      throw notFound(`batch ${batchId}`);
    return batchId;
  };

  router.add<undefined, unknown, unknown>(
    {
      method: "POST",
      url: "/v1/batches",
      summary:
        "Submit a batch: a JSON body, or a text/csv upload with the options as query parameters",
      auth: true,
      body: SubmitBatchBody,
      bodyTypes: ["text/csv"],
    },
    async ({ caller, request, body, reply }) => {
      const isCsv = typeof (body as Readable | undefined)?.pipe === "function";
      let options: SubmitQuery;
      let source: ReturnType<typeof csvRows>;
      if (isCsv) {
        const parsed = validate(SubmitBatchQuery, request.query ?? {});
        if (!parsed.success) {
          (body as Readable).resume();
          throw invalidRequest(parsed.issues.map((i) => ({ ...i, field: `query.${i.field}` })));
        }
        options = parsed.data as SubmitQuery;
        source = csvRows(limited(body as Readable, router.deps.bodyLimitBytes), options.kind);
      } else {
        options = body as SubmitQuery & { rows: unknown[] };
        source = jsonRows((body as { rows: unknown[] }).rows, options.kind);
      }
      const account = accountOf(caller, options.account);
      try {
        const report = await batches.submit({
          account,
          kind: options.kind,
          source,
          ...(options.dryRun !== undefined && { dryRun: options.dryRun }),
          ...(options.allowPartial !== undefined && { allowPartial: options.allowPartial }),
          ...(options.batchId !== undefined && { batchId: options.batchId }),
        });
        return reply.code(report.created ? 202 : 200).send(report);
      } catch (error) {
        if (error instanceof BatchRefusedError)
          throw new ApiError(422, error.code, error.message, { rows: error.issues });
        if (error instanceof BatchFileError)
          throw new ApiError(error.code === "too_large" ? 413 : 400, error.code, error.message, {
            details: error.problems.map((rule) => ({ field: "file", rule })),
          });
        throw error;
      }
    },
  );

  router.add<{ batchId: string }>(
    {
      method: "GET",
      url: "/v1/batches/:batchId",
      summary: "A batch's state, counts per result, progress and timings",
      auth: true,
      params: BatchParams,
    },
    async ({ caller, params }) => batches.status(await ownBatch(caller, params.batchId)),
  );

  router.add<{ batchId: string }, { format?: "csv" | "jsonl" }>(
    {
      method: "GET",
      url: "/v1/batches/:batchId/results",
      summary: "The batch's results report, one line per row, streamed (CSV or JSON lines)",
      auth: true,
      params: BatchParams,
      query: ResultsQuery,
    },
    async ({ caller, params, query, request, reply }) => {
      const batchId = await ownBatch(caller, params.batchId);
      const csv =
        query.format === "csv" ||
        (query.format === undefined && String(request.headers.accept ?? "").includes("text/csv"));
      return reply
        .type(csv ? "text/csv; charset=utf-8" : "application/x-ndjson")
        .header("content-disposition", `attachment; filename="${batchId}.${csv ? "csv" : "jsonl"}"`)
        .send(Readable.from(renderReport(batches.report(batchId), csv ? "csv" : "jsonl")));
    },
  );

  router.add<{ batchId: string }>(
    {
      method: "POST",
      url: "/v1/batches/:batchId/cancel",
      summary: "Cancel a batch: its jobs not yet sent are removed and end `cancelled`",
      auth: true,
      params: BatchParams,
    },
    async ({ caller, params }) => {
      try {
        return await batches.cancel(await ownBatch(caller, params.batchId));
      } catch (error) {
        if (error instanceof BatchNotCancellableError)
          throw new ApiError(409, error.code, error.message);
        throw error;
      }
    },
  );
}

/** Fails the stream with BatchFileError("too_large") past `limit` bytes. */
function limited(input: Readable, limit: number): Readable {
  let seen = 0;
  const guard = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen <= limit) return done(null, chunk);
      // The rest of the upload is read and dropped, so that the client gets the 413.
      input.unpipe(guard);
      input.resume();
      done(new BatchFileError("too_large", [`the file is larger than ${limit} bytes`]));
    },
  });
  input.on("error", (error) => guard.destroy(error));
  return input.pipe(guard);
}
