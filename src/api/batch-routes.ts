import { Readable, Transform } from "node:stream";
import type { z } from "zod";
import {
  BatchAmbiguousError,
  BatchFileError,
  BatchNotFoundError,
  BatchOptionError,
  BatchRefusedError,
} from "../batches/batch-errors.js";
import { csvRows, jsonRows, type RowSource } from "../batches/batch-rows.js";
import type { Batches } from "../batches/batches.js";
import { KEY_REUSED } from "../batches/key-reuse.js";
import { renderReport } from "../batches/report-format.js";
import { validate } from "../contract/field-issues.js";
import { IdempotencyKeyReusedError } from "../queues/enqueue-error.js";
import type { ReportLine } from "../results/report-line.js";
import { type ApiRouter, type AuthRouteSpec, type Handled, isUpload } from "./api-app.js";
import { ApiError, invalidRequest, notFound } from "./api-error.js";
import { accountOf, type Caller } from "./auth.js";
import {
  AccountQuery,
  BatchListQuery,
  BatchParams,
  ResultsQuery,
  SubmitBatchBody,
  SubmitBatchQuery,
} from "./request-schemas.js";

/** A submission's options, from a JSON body or from a CSV upload's query. */
type SubmitOptions = z.output<typeof SubmitBatchQuery>;

/** Bulk batches: submit (JSON or CSV, dry run, partial), list, status, results, cancel. */
export function registerBatchRoutes(router: ApiRouter): void {
  registerSubmit(router);
  registerList(router);
  registerStatus(router);
  registerResults(router);
  registerCancel(router);
  registerDecision(router, "approve");
  registerDecision(router, "reject");
}

/**
 * The account whose batch `batchId` is: the named one, or the one of the caller's accounts
 * that has a batch of that id. Another account's batch is never found: 404, never 403.
 */
async function ownBatch(
  batches: Batches,
  caller: Caller,
  batchId: string,
  named: string | undefined,
): Promise<string> {
  const among = named === undefined ? caller.accounts : [accountOf(caller, named)];
  try {
    return await batches.accountOf(batchId, among);
  } catch (error) {
    if (error instanceof BatchNotFoundError) throw notFound(`batch ${batchId}`);
    if (error instanceof BatchAmbiguousError)
      throw new ApiError(
        "invalid_request",
        `account: required (batch ${batchId} exists in several of this token's accounts)`,
        {
          details: [
            { field: "query.account", rule: "required (the batch id is in several accounts)" },
          ],
        },
      );
    throw error;
  }
}

function registerSubmit(router: ApiRouter): void {
  router.addUpload(
    {
      method: "POST",
      url: "/v1/batches",
      summary:
        "Submit a batch: a JSON body, or a text/csv upload with the options as query parameters",
      auth: true,
      permission: "submit",
      body: SubmitBatchBody,
      bodyTypes: ["text/csv"],
      audit: "batch_submit",
    },
    async ({ caller, request, body, reply, audit }) => {
      const { options, source } = submission(router, request.query, body);
      const account = accountOf(caller, options.account);
      audit({ account, kind: options.kind, batchId: options.batchId, dryRun: options.dryRun });
      // A submission waiting for another one of the same batch stops when its client goes away.
      const gone = new AbortController();
      reply.raw.once("close", () => {
        if (!reply.raw.writableEnded) gone.abort();
      });
      try {
        const report = await router.deps.batches.submit({
          account,
          kind: options.kind,
          source,
          signal: gone.signal,
          ...(options.dryRun !== undefined && { dryRun: options.dryRun }),
          ...(options.allowPartial !== undefined && { allowPartial: options.allowPartial }),
          ...(options.batchId !== undefined && { batchId: options.batchId }),
          ...(options.notBefore !== undefined && { notBefore: new Date(options.notBefore) }),
          ...(options.priority !== undefined && { priority: options.priority }),
          submittedBy: caller.name,
        });
        audit({ batchId: report.batchId, created: report.created, accepted: report.accepted });
        return reply.code(report.created ? 202 : 200).send(report);
      } catch (error) {
        throw submitError(error);
      }
    },
  );
}

/** The options and rows of a submission: a JSON body, or a CSV upload with query options. */
function submission(
  router: ApiRouter,
  query: unknown,
  body: z.output<typeof SubmitBatchBody> | Readable,
): { options: SubmitOptions; source: RowSource } {
  if (!isUpload(body)) {
    try {
      return { options: body, source: jsonRows(body.rows, body.kind) };
    } catch (error) {
      throw submitError(error);
    }
  }
  const parsed = validate(SubmitBatchQuery, query ?? {});
  if (!parsed.success) {
    body.resume();
    throw invalidRequest(parsed.issues.map((i) => ({ ...i, field: `query.${i.field}` })));
  }
  const options = parsed.data;
  return {
    options,
    source: csvRows(limited(body, router.deps.bodyLimitBytes), options.kind),
  };
}

/** A submission's refusal in the API's shape; other errors as they are. */
function submitError(error: unknown): unknown {
  if (error instanceof BatchRefusedError) {
    const reused = error.issues.some((i) => i.rule.startsWith(KEY_REUSED));
    return new ApiError(reused ? KEY_REUSED : error.code, error.message, {
      rows: error.issues,
    });
  }
  // A key taken by a single job while the batch was being sent (its pre-check passed).
  if (error instanceof IdempotencyKeyReusedError)
    return new ApiError(error.code, error.message, { jobId: error.jobId });
  if (error instanceof BatchFileError)
    return new ApiError(error.code, error.message, {
      details: error.problems.map((rule) => ({ field: "file", rule })),
    });
  if (error instanceof BatchOptionError)
    return new ApiError("invalid_request", error.message, {
      details: [{ field: error.field, rule: error.rule }],
    });
  return error;
}

/**
 * Approve or reject a batch awaiting approval. The caller is the approver: a token other than
 * the one that submitted the batch.
 */
function registerDecision(router: ApiRouter, decision: "approve" | "reject"): void {
  addBatchRoute(
    router,
    {
      method: "POST",
      url: `/v1/batches/:batchId/${decision}`,
      summary:
        decision === "approve"
          ? "Approve a batch awaiting approval (not by the token that submitted it): its jobs are released"
          : "Reject a batch awaiting approval: it is cancelled, every job ends `cancelled` (batch_rejected)",
      audit: `batch_${decision}`,
      permission: "approve",
      query: AccountQuery,
    },
    async ({ params, caller, audit }, account) => {
      const { batches } = router.deps;
      const report =
        decision === "approve"
          ? await batches.approve(account, params.batchId, caller.name)
          : await batches.reject(account, params.batchId, caller.name);
      audit({ account, jobs: report.jobs });
      return report;
    },
  );
}

/** The declaration of a route on one batch, `/v1/batches/:batchId...`; the query names its account. */
type BatchRouteSpec<S extends BatchQuery> = Pick<
  AuthRouteSpec<typeof BatchParams, S>,
  "method" | "url" | "summary" | "permission" | "audit"
> & { readonly query: S };

/** A batch route's query: it names the batch's account, and may ask more. */
type BatchQuery = z.ZodType<{ account?: string | undefined }>;

/**
 * A route on one batch of the caller's: the handler gets the batch's account (`ownBatch`). A
 * mutating one records the batch id first, so its audit line names the batch even when refused.
 */
function addBatchRoute<S extends BatchQuery = typeof AccountQuery>(
  router: ApiRouter,
  spec: BatchRouteSpec<S>,
  handler: (
    ctx: Handled<z.output<typeof BatchParams>, z.output<S>, undefined>,
    account: string,
  ) => Promise<unknown>,
): void {
  const { batches } = router.deps;
  router.add(
    {
      method: spec.method,
      url: spec.url,
      summary: spec.summary,
      auth: true,
      permission: spec.permission,
      params: BatchParams,
      query: spec.query,
      ...(spec.audit !== undefined && { audit: spec.audit }),
    },
    async (ctx) => {
      const { batchId } = ctx.params;
      if (spec.audit !== undefined) ctx.audit({ batchId });
      return handler(ctx, await ownBatch(batches, ctx.caller, batchId, ctx.query.account));
    },
  );
}

function registerList(router: ApiRouter): void {
  router.add(
    {
      method: "GET",
      url: "/v1/batches",
      summary:
        "The newest batches of an account (or of every account of the token), optionally in given states",
      auth: true,
      permission: "read",
      query: BatchListQuery,
    },
    async ({ caller, query }) => {
      const accounts =
        query.account === undefined ? caller.accounts : [accountOf(caller, query.account)];
      return router.deps.batches.list(accounts, query.state ?? [], query.limit ?? 50);
    },
  );
}

function registerStatus(router: ApiRouter): void {
  addBatchRoute(
    router,
    {
      method: "GET",
      url: "/v1/batches/:batchId",
      summary: "A batch's state, counts per result, progress and timings",
      permission: "read",
      query: AccountQuery,
    },
    async ({ params }, account) => router.deps.batches.status(account, params.batchId),
  );
}

function registerResults(router: ApiRouter): void {
  addBatchRoute(
    router,
    {
      method: "GET",
      url: "/v1/batches/:batchId/results",
      summary: "The batch's results report, one line per row, streamed (CSV or JSON lines)",
      permission: "read",
      query: ResultsQuery,
    },
    async ({ params, query, request, reply }, account) => {
      const { batchId } = params;
      const all = await router.deps.batches.openReport(account, batchId);
      const lines = query.result === undefined ? all : onlyResults(all, query.result);
      const { totals } = await router.deps.batches.status(account, batchId);
      const csv =
        query.format === "csv" ||
        (query.format === undefined && String(request.headers.accept ?? "").includes("text/csv"));
      return reply
        .type(csv ? "text/csv; charset=utf-8" : "application/x-ndjson")
        .header("content-disposition", `attachment; filename="${batchId}.${csv ? "csv" : "jsonl"}"`)
        .send(Readable.from(renderReport(lines, csv ? "csv" : "jsonl", totals)));
    },
  );
}

function registerCancel(router: ApiRouter): void {
  addBatchRoute(
    router,
    {
      method: "POST",
      url: "/v1/batches/:batchId/cancel",
      summary: "Cancel a batch: its jobs not yet sent are removed and end `cancelled`",
      permission: "operate",
      audit: "batch_cancel",
      query: AccountQuery,
    },
    async ({ params, audit }, account) => {
      const report = await router.deps.batches.cancel(account, params.batchId);
      audit({ account: report.status.account, cancelled: report.cancelled });
      return report;
    },
  );
}

async function* onlyResults(
  lines: AsyncIterable<ReportLine>,
  results: readonly string[],
): AsyncGenerator<ReportLine> {
  for await (const line of lines) if (results.includes(line.result)) yield line;
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
