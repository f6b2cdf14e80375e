import type { Logger } from "../logger.js";
import { redisTroubleOf } from "./refusals.js";

/** How often a run of the same error is summed up in one line. */
export const REPEAT_INTERVAL_MS = 10_000;
/** Runs followed at once; an error of a kind beyond them is counted under one shared kind. */
const MAX_KINDS = 100;

/** What an error is counted as: its source (a part of the process) and a bounded code. */
export interface ErrorCount {
  readonly source: string;
  /** A RedisTroubleCode, or `other`. */
  readonly code: string;
}

interface Run {
  readonly source: string;
  readonly msg: string;
  readonly fields: Record<string, unknown>;
  /** Occurrences since the last line about this run. */
  repeats: number;
  last: string;
}

/**
 * A run of the same error (a Redis refusal met by every worker loop, every request) is logged
 * once when it begins, then once per interval with how many times it came meanwhile, instead of
 * once per occurrence (a worker met an out-of-memory Redis some 170 times a second). Every
 * occurrence is counted through `count` (a metric). The same error is the same source, message
 * and kind: Redis's trouble code, or the error's message with its digits taken out.
 */
export class RepeatedErrors {
  readonly #logger: Logger;
  readonly #count: (count: ErrorCount) => void;
  readonly #intervalMs: number;
  readonly #runs = new Map<string, Run>();
  readonly #timer: NodeJS.Timeout;

  constructor(
    logger: Logger,
    options: { count?: (count: ErrorCount) => void; intervalMs?: number } = {},
  ) {
    this.#logger = logger;
    this.#count = options.count ?? (() => undefined);
    this.#intervalMs = options.intervalMs ?? REPEAT_INTERVAL_MS;
    this.#timer = setInterval(() => this.#sumUp(), this.#intervalMs);
    this.#timer.unref();
  }

  /**
   * Logs `error` (at error level, as `msg`, with `fields`) unless it continues a run, which is
   * summed up at the interval's end.
   */
  report(source: string, msg: string, error: Error, fields: Record<string, unknown> = {}): void {
    const code = redisTroubleOf(error)?.code ?? "other";
    this.#count({ source, code });
    let key = `${source}\u0000${msg}\u0000${code === "other" ? shapeOf(error.message) : code}`;
    if (!this.#runs.has(key) && this.#runs.size >= MAX_KINDS) key = `${source}\u0000${msg}\u0000*`;
    const run = this.#runs.get(key);
    if (run) {
      run.repeats += 1;
      run.last = error.message;
      return;
    }
    this.#runs.set(key, { source, msg, fields, repeats: 0, last: error.message });
    this.#logger.error({ ...fields, err: error.message, code }, msg);
  }

  /** Sums up every run and stops the timer. Idempotent. */
  close(): void {
    clearInterval(this.#timer);
    this.#sumUp();
    this.#runs.clear();
  }

  /** One line per run that repeated; a run that did not is over, and its next error is logged. */
  #sumUp(): void {
    for (const [key, run] of this.#runs) {
      if (run.repeats === 0) {
        this.#runs.delete(key);
        continue;
      }
      this.#logger.error(
        { ...run.fields, err: run.last, repeats: run.repeats, intervalMs: this.#intervalMs },
        `${run.msg} (repeated ${run.repeats} times in ${this.#intervalMs / 1000} s)`,
      );
      run.repeats = 0;
    }
  }
}

/** An error's message without what changes between occurrences (ids, counts, script lines). */
function shapeOf(message: string): string {
  return message.replace(/[0-9a-f]{8,}|\d+/gi, "#").slice(0, 200);
}
