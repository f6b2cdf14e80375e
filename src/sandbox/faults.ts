import { z } from "zod";
import { seededRandom } from "./prng.js";

const share = z.number().min(0).max(1);

/** Faults of one account; all off by default. Documented in docs/sandbox.md. */
export const FaultSettings = z.strictObject({
  /** Added to every answer, in milliseconds. */
  latencyMs: z.int().min(0).max(60_000).default(0),
  /** Up to this much more, drawn per request. */
  latencyJitterMs: z.int().min(0).max(60_000).default(0),
  /** Share of requests answered 500, 502 or 503 before anything happens. */
  errorRate: share.default(0),
  errorStatuses: z
    .array(z.union([z.literal(500), z.literal(502), z.literal(503)]))
    .min(1)
    .default([500, 502, 503]),
  /** Requests per second per key; over it, 429 with Retry-After. */
  rateLimitPerSecond: z.int().min(1).max(1_000_000).optional(),
  /** Retry-After of those 429s, in seconds (0: "at once"); default: the whole seconds until the window frees. */
  rateLimitRetryAfterSeconds: z.int().min(0).max(3600).optional(),
  /** Share of requests that are never answered (and have no effect). */
  hangRate: share.default(0),
  /** Share of requests whose effect happens but whose connection is dropped before the answer. */
  dropAfterCommitRate: share.default(0),
  /** Seed of this account's draws; default: the sandbox's seed. */
  seed: z.int().optional(),
});
export type FaultSettings = z.output<typeof FaultSettings>;
export type FaultSettingsInput = z.input<typeof FaultSettings>;

/** Draws one account's faults from a seeded generator, so a run can be repeated. */
export class AccountFaults {
  readonly settings: FaultSettings;
  readonly #random: () => number;

  constructor(settings: FaultSettings, defaultSeed: number) {
    this.settings = settings;
    this.#random = seededRandom(settings.seed ?? defaultSeed);
  }

  hang(): boolean {
    return this.settings.hangRate > 0 && this.#random() < this.settings.hangRate;
  }

  /** The status of an injected server error, or undefined. */
  error(): 500 | 502 | 503 | undefined {
    if (this.settings.errorRate === 0 || this.#random() >= this.settings.errorRate)
      return undefined;
    const statuses = this.settings.errorStatuses;
    return statuses[Math.floor(this.#random() * statuses.length)];
  }

  latencyMs(): number {
    const { latencyMs, latencyJitterMs } = this.settings;
    return latencyMs + (latencyJitterMs > 0 ? Math.floor(this.#random() * latencyJitterMs) : 0);
  }

  dropAfterCommit(): boolean {
    return (
      this.settings.dropAfterCommitRate > 0 && this.#random() < this.settings.dropAfterCommitRate
    );
  }
}
