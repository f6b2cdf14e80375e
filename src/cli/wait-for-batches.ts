import cliProgress from "cli-progress";
import type { BatchStatus } from "../batches/batch-reports.js";
import type { Batches } from "../batches/batches.js";

/** A batch is over once every accepted row has a result. */
export const isOver = (s: BatchStatus) => s.finishedAt !== undefined;

/**
 * Polls the batches until each is over, showing one progress bar on stderr (a line every
 * second when stderr is not a terminal). Resolves with their final statuses.
 */
export async function waitForBatches(
  batches: Batches,
  ids: readonly { readonly account: string; readonly batchId: string }[],
  options: { readonly pollMs?: number; readonly quiet?: boolean } = {},
): Promise<BatchStatus[]> {
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: "  {bar} {percentage}% | {value}/{total} rows | {state}",
      noTTYOutput: true,
      notTTYSchedule: 1_000,
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
  let statuses = await Promise.all(ids.map((id) => batches.status(id.account, id.batchId)));
  const total = statuses.reduce((n, s) => n + s.accepted, 0);
  const done = () => statuses.reduce((n, s) => n + s.finished, 0);
  const state = () => [...new Set(statuses.map((s) => s.state))].join(", ");
  if (!options.quiet) bar.start(total, done(), { state: state() });
  try {
    while (!statuses.every(isOver)) {
      await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 250));
      statuses = await Promise.all(ids.map((id) => batches.status(id.account, id.batchId)));
      if (!options.quiet) bar.update(done(), { state: state() });
    }
  } finally {
    if (!options.quiet) bar.stop();
  }
  return statuses;
}
