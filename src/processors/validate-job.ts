import type { Job } from "bullmq";
import type { PaymentsClient } from "../client/payments-client.js";
import type { AccountConfig } from "../config/load-config.js";
import { formatFieldIssues, validate } from "../contract/field-issues.js";
import { type JobData, mayHaveBeenSent } from "../queues/job-data.js";
import { type JobEnvelope, JobEnvelopeSchema } from "../queues/job-envelope.js";
import type { JobResult } from "../results/job-result.js";
import type { Ending } from "./finish-job.js";
import type { ProcessorDeps } from "./processor-deps.js";

/** A job fit to run, or the ending of one that is not (with what its result can name). */
export type CheckedJob =
  | {
      readonly valid: true;
      readonly envelope: JobEnvelope;
      readonly account: AccountConfig;
      readonly client: PaymentsClient;
    }
  | { readonly valid: false; readonly envelope: JobEnvelope; readonly ending: Ending };

/** A job that ran before may have its result already (a crash after emitting it). */
export async function earlierResult(
  results: ProcessorDeps["results"],
  job: Job<JobData>,
): Promise<JobResult | undefined> {
  if (job.attemptsStarted > 1 || job.data.state !== undefined)
    return results.get(job.data.envelope.account, job.id as string);
  return undefined;
}

/** Checks the job's envelope against its schema and its account against the configuration. */
export function checkJob(
  deps: Pick<ProcessorDeps, "accounts" | "clients">,
  job: Job<JobData>,
): CheckedJob {
  const parsed = validate(JobEnvelopeSchema, job.data?.envelope);
  if (!parsed.success) {
    const raw = (job.data?.envelope ?? {}) as unknown as Record<string, unknown>;
    const envelope = {
      kind: String(raw.kind ?? "unknown"),
      account: String(raw.account ?? ""),
      idempotencyKey: String(raw.idempotencyKey ?? ""),
    } as unknown as JobEnvelope;
    const message = formatFieldIssues(parsed.issues);
    const ending: Ending = mayHaveBeenSent(job, job.data?.state)
      ? {
          result: "needs_reconciliation",
          code: "invalid_request",
          message: `${message}; cannot be sent, but an earlier attempt may have been`,
        }
      : { result: "rejected", code: "validation_error", message };
    return { valid: false, envelope, ending };
  }
  const envelope = parsed.data as JobEnvelope;
  const account = deps.accounts.get(envelope.account);
  const client = deps.clients.get(envelope.account);
  if (!account || !client) {
    const ending: Ending = {
      result: "rejected",
      code: "unknown_account",
      message: `account: no account is configured with alias "${envelope.account}"`,
    };
    return { valid: false, envelope, ending };
  }
  return { valid: true, envelope, account, client };
}
