/** A dead-letter replay refused because the job is not (or no longer) a dead letter to replay. */
export class ReplayConflictError extends Error {
  readonly code = "replay_conflict";

  constructor(jobId: string, why: string) {
    super(`${jobId} cannot be replayed: ${why}`);
    this.name = "ReplayConflictError";
  }
}
