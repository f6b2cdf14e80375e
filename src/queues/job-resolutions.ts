import type { ApprovalPolicy } from "../config/load-config.js";
import { MoneyqError } from "../errors/moneyq-error.js";
import type { RedisConnection } from "../redis/connection.js";
import { type Keyspace, resolutionRequestKey } from "../redis/keys.js";
import { redisContext } from "../redis/redis-context.js";
import type { JobResult } from "../results/job-result.js";
import {
  RESOLVABLE,
  type Resolution,
  type Resolutions,
  type ResolvedAs,
} from "../results/resolutions.js";
import type { ResultsStore } from "../results/results-store.js";

/** Why a resolution by hand was refused: a stable code, as the API answers it. */
export class ResolutionError extends MoneyqError {
  constructor(
    readonly code: "not_resolvable" | "already_resolved" | "own_resolution" | "no_request",
    message: string,
  ) {
    super(message);
  }
}

/** What an operator says of a job's outcome. */
export interface ResolutionAsked {
  readonly to: ResolvedAs;
  readonly note: string;
  readonly upstreamId?: string | undefined;
}

/** A resolution by hand that waits for a second person. */
export interface ResolutionRequest extends ResolutionAsked {
  readonly requestedBy: string;
  readonly requestedAt: string;
}

export type ResolutionOutcome =
  | { readonly state: "resolved"; readonly resolution: Resolution }
  | { readonly state: "awaiting_approval"; readonly request: ResolutionRequest };

/** A resolution asked for by hand waits this long for its second person. */
const REQUEST_TTL_MS = 7 * 24 * 3_600_000;

/**
 * Resolutions by hand (docs/reconciliation.md, "Resolving exceptions"): an operator says whether
 * the provider made a payment moneyq left to reconciliation (or recorded as failed), with a
 * note; under an account policy that asks for it, a second person approves it first.
 */
export class JobResolutions {
  readonly #redis: RedisConnection;
  readonly #space: Keyspace;
  readonly #results: ResultsStore;
  readonly #resolutions: Resolutions;
  readonly #approvals: ReadonlyMap<string, ApprovalPolicy>;

  constructor(options: {
    readonly connection: RedisConnection;
    readonly prefix: string;
    readonly results: ResultsStore;
    readonly resolutions: Resolutions;
    readonly approvals?: ReadonlyMap<string, ApprovalPolicy>;
  }) {
    this.#redis = options.connection;
    this.#space = redisContext(options.connection, options.prefix).space;
    this.#results = options.results;
    this.#resolutions = options.resolutions;
    this.#approvals = options.approvals ?? new Map();
  }

  /** The job's resolution, and a request waiting for approval, if any. */
  async of(account: string, jobId: string) {
    const [resolution, raw] = await Promise.all([
      this.#resolutions.of(account, jobId),
      this.#redis.get(resolutionRequestKey(this.#space, account, jobId)),
    ]);
    return {
      resolution: resolution ?? null,
      request: raw === null ? null : (JSON.parse(raw) as ResolutionRequest),
    };
  }

  /**
   * Resolves the job as `by` says, at once; or, under a policy of two people, records the
   * request for another to approve.
   */
  async request(
    account: string,
    jobId: string,
    asked: ResolutionAsked,
    by: string,
  ): Promise<ResolutionOutcome> {
    const result = await this.#resolvable(account, jobId);
    if (this.#approvals.get(account)?.resolutionsBySecondPerson !== true)
      return this.#resolve(result, asked, { by: "operator", name: by });
    const request: ResolutionRequest = {
      ...asked,
      requestedBy: by,
      requestedAt: new Date().toISOString(),
    };
    await this.#redis.set(
      resolutionRequestKey(this.#space, account, jobId),
      JSON.stringify(request),
      "PX",
      REQUEST_TTL_MS,
    );
    return { state: "awaiting_approval", request };
  }

  /** A second person approves the resolution asked for; never the one who asked. */
  async approve(account: string, jobId: string, by: string): Promise<ResolutionOutcome> {
    const key = resolutionRequestKey(this.#space, account, jobId);
    const raw = await this.#redis.get(key);
    if (raw === null)
      throw new ResolutionError(
        "no_request",
        `job ${jobId} has no resolution waiting for approval`,
      );
    const request = JSON.parse(raw) as ResolutionRequest;
    if (request.requestedBy === by)
      throw new ResolutionError(
        "own_resolution",
        `the resolution of job ${jobId} was asked for by ${by}: another person approves it`,
      );
    const result = await this.#resolvable(account, jobId);
    const outcome = await this.#resolve(result, request, {
      by: "operator",
      name: request.requestedBy,
      approvedBy: by,
    });
    await this.#redis.del(key);
    return outcome;
  }

  /**
   * Resolves a job with what a lookup at the provider found (a dead letter's replay that found
   * its payment made); false when it was resolved before or cannot be.
   */
  async byLookup(
    result: JobResult,
    found: {
      readonly to: ResolvedAs;
      readonly upstreamId: string;
      readonly status: string;
      readonly by: string;
    },
    name: string,
  ): Promise<Resolution | undefined> {
    if (!RESOLVABLE.has(result.result)) return undefined;
    await this.#resolutions.resolve(result, {
      to: found.to,
      resolver: { by: "lookup", name },
      upstreamId: found.upstreamId,
      evidence: { provider: { id: found.upstreamId, status: found.status, foundBy: found.by } },
    });
    return this.#resolutions.of(result.account, result.jobId);
  }

  /** The account's audit trail of resolutions, newest first. */
  trail(account: string, count: number): Promise<Resolution[]> {
    return this.#resolutions.trail(account, count);
  }

  async #resolvable(account: string, jobId: string): Promise<JobResult> {
    const result = await this.#results.get(account, jobId);
    if (result === undefined || !RESOLVABLE.has(result.result))
      throw new ResolutionError(
        "not_resolvable",
        `job ${jobId} ${result === undefined ? "has no result yet" : `ended ${result.result}`}: only a job that ended needs_reconciliation or failed is resolved`,
      );
    if ((await this.#resolutions.of(account, jobId)) !== undefined)
      throw new ResolutionError("already_resolved", `job ${jobId} was resolved already`);
    return result;
  }

  async #resolve(
    result: JobResult,
    asked: ResolutionAsked,
    resolver: Resolution["resolver"],
  ): Promise<ResolutionOutcome> {
    const recorded = await this.#resolutions.resolve(result, {
      to: asked.to,
      resolver,
      note: asked.note,
      ...(asked.upstreamId !== undefined && { upstreamId: asked.upstreamId }),
      evidence: {
        operator: {
          note: asked.note,
          ...(asked.upstreamId !== undefined && { upstreamId: asked.upstreamId }),
        },
      },
    });
    if (!recorded)
      throw new ResolutionError("already_resolved", `job ${result.jobId} was resolved already`);
    const resolution = (await this.#resolutions.of(result.account, result.jobId)) as Resolution;
    return { state: "resolved", resolution };
  }
}
