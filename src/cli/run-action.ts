import {
  BatchFileError,
  BatchIdReusedError,
  BatchNotCancellableError,
  BatchNotFoundError,
  BatchOptionError,
  BatchRefusedError,
  BatchSubmissionBusyError,
} from "../batches/batch-errors.js";
import { ConfigError } from "../config/load-config.js";
import { errorCode } from "../contract/error-code.js";
import { EnqueueValidationError } from "../queues/enqueue-error.js";
import { ReplayConflictError } from "../queues/replay-conflict-error.js";
import { redisTroubleOf } from "../redis/refusals.js";
import { RedisUnavailableError } from "../redis/unavailable-error.js";
import { CliError } from "./cli-error.js";
import { EXIT } from "./exit-codes.js";
import { formatIssues } from "./summary.js";

/** Errors a user can act on: their message, and the exit code. Others are bugs: a stack. */
function explain(error: unknown): { message: string; code: number } | undefined {
  if (error instanceof CliError) return { message: error.message, code: error.exitCode };
  if (error instanceof BatchRefusedError)
    return { message: `${error.message}\n${formatIssues(error.issues)}`, code: EXIT.usage };
  if (error instanceof BatchFileError)
    return {
      message: `cannot read the batch file (${error.code}):\n  ${error.problems.join("\n  ")}`,
      code: EXIT.usage,
    };
  if (
    error instanceof ConfigError ||
    error instanceof EnqueueValidationError ||
    error instanceof BatchNotFoundError ||
    error instanceof BatchNotCancellableError ||
    error instanceof BatchIdReusedError ||
    error instanceof BatchSubmissionBusyError ||
    error instanceof BatchOptionError ||
    error instanceof ReplayConflictError ||
    error instanceof RedisUnavailableError
  )
    return { message: error.message, code: EXIT.usage };
  // Redis refused (out of memory, read-only) or went away mid-command: a sentence, not a stack.
  const trouble = redisTroubleOf(error);
  if (trouble)
    return {
      message: `${trouble.reason} (${trouble.code}); nothing was done that running the same command again would repeat: run it again in ${trouble.retryAfterSeconds} s`,
      code: EXIT.failures,
    };
  // The service's UnsafeRedisError, matched by code: importing it would load the whole service here.
  if (error instanceof Error && errorCode(error) === "unsafe_redis")
    return { message: error.message, code: EXIT.usage };
  return undefined;
}

/** Wraps a command's action: known errors print their message and set the exit code. */
export function runAction<A extends unknown[]>(
  action: (...args: A) => Promise<number | undefined>,
) {
  return async (...args: A): Promise<void> => {
    try {
      const code = await action(...args);
      process.exitCode = code ?? EXIT.ok;
    } catch (error) {
      const known = explain(error);
      if (!known) throw error;
      process.stderr.write(`moneyq: ${known.message}\n`);
      process.exitCode = known.code;
    }
  };
}
