import { JOB_FIELDS } from "../bullmq-internals.js";
import { dropSent, lockHeld } from "./fragments.js";
import type { Script } from "./script.js";

/**
 * Writes a job's data (and, when it changes lanes, its BullMQ priority) only while `token`
 * still holds the job's lock: BullMQ's own `updateData` does not check, so a worker that lost
 * its job could overwrite the new owner's state. Optionally drops the job's "sent" record in
 * the same step (a request proved never sent).
 * KEYS: 1 the job's hash, 2 its lock, 3 the job's hash again (or the lock).
 * ARGV: 1 token, 2 data, 3 priority ('' keeps it), 4 '1' drops the record.
 * Answers 1 when written, 0 when the token no longer holds the lock or the job is gone.
 */
export const WRITE_JOB_DATA: Script = {
  name: "moneyqWriteJobData",
  lua: `
if not ${lockHeld("KEYS[2]", "ARGV[1]")} or redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('HSET', KEYS[1], '${JOB_FIELDS.data}', ARGV[2])
if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[1], '${JOB_FIELDS.priority}', ARGV[3])
end
if ARGV[4] == '1' then
  ${dropSent("KEYS[3]")}
end
return 1`,
};
