import { MoneyqError } from "../errors/moneyq-error.js";

/** A dead-letter replay refused because the job is not (or no longer) a dead letter to replay. */
export class ReplayConflictError extends MoneyqError {
  readonly code = "replay_conflict";

  constructor(jobId: string, why: string) {
    super(`${jobId} cannot be replayed: ${why}`);
  }
}
