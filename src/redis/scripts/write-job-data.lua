--[[
  Writes a job's data (and, when it changes lanes, its BullMQ priority) only while `token`
  still holds the job's lock: BullMQ's own `updateData` does not check, so a worker that lost
  its job could overwrite the new owner's state. Optionally drops the job's "sent" record in
  the same step (a request proved never sent).

  Input:
    KEYS[1] the job's hash
    KEYS[2] its lock
    KEYS[3] the job's hash again (or the lock): its "sent" record is dropped there

    ARGV[1] token
    ARGV[2] data
    ARGV[3] priority ('' keeps it)
    ARGV[4] '1' drops the "sent" record

  Output:
    1 when written, 0 when the token no longer holds the lock or the job is gone.
]]
--- @include "lock-held"
--- @include "sent-record"
if not lockHeld(KEYS[2], ARGV[1]) or redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('HSET', KEYS[1], JOB_DATA_FIELD, ARGV[2])
if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[1], JOB_PRIORITY_FIELD, ARGV[3])
end
if ARGV[4] == '1' then
  dropSent(KEYS[3])
end
return 1
