import { expect } from "vitest";
import type { EnqueuedJob } from "../../src/queues/producer.js";
import type { JobResult } from "../../src/results/job-result.js";
import type { TestSandbox } from "./sandbox.js";

/**
 * Every enqueued job has exactly one terminal result, the sandbox holds at most one effect per
 * idempotency key, and a succeeded job's effect is the one its result names.
 */
export async function expectExactlyOnce(
  sb: TestSandbox,
  accountId: string,
  enqueued: readonly EnqueuedJob[],
  results: readonly JobResult[],
) {
  const perJob = new Map<string, JobResult[]>();
  for (const r of results) perJob.set(r.jobId, [...(perJob.get(r.jobId) ?? []), r]);
  const missing = enqueued.filter((e) => !perJob.has(e.jobId));
  const repeated = [...perJob.values()].filter((list) => list.length > 1);
  expect(missing).toEqual([]);
  expect(repeated).toEqual([]);
  expect(perJob.size).toBe(enqueued.length);

  const entries = (await sb.control("GET", "/ledger", { query: { accountId } })).body.data
    .entries as {
    idempotencyKey: string | null;
    effectId: string | null;
  }[];
  const effects = new Map<string, Set<string>>();
  for (const e of entries) {
    if (e.idempotencyKey === null || e.effectId === null) continue;
    effects.set(e.idempotencyKey, (effects.get(e.idempotencyKey) ?? new Set()).add(e.effectId));
  }
  const doubled = [...effects].filter(([, s]) => s.size > 1);
  expect(doubled).toEqual([]);
  for (const r of results) {
    if (r.result === "succeeded")
      expect([...(effects.get(r.idempotencyKey) ?? [])]).toEqual([r.upstreamId]);
  }
  expect(await sb.invariants()).toEqual({ ok: true, violations: [] });
}
