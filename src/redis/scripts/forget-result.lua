--[[
  Forgets a job's result so that a replay can emit a new one.

  Input:
    KEYS[1] the job's result marker
    KEYS[2] where an earlier release kept it
    KEYS[3] its account's reconciliation backlog

    ARGV[1] the result as recorded ('' forgets any)
    ARGV[2] the job id

  Output:
    1 when the marker was deleted and the job taken out of the backlog, 0 when the marker
    holds another result.
]]
if ARGV[1] ~= '' and (redis.call('GET', KEYS[1]) or redis.call('GET', KEYS[2])) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[2])
return 1
