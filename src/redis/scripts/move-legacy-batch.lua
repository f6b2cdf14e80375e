--[[
  Moves one batch stored before batches belonged to their account (meta at
  `<prefix>:batch:<id>`, rows at `<prefix>:batch:<id>:rows`) to its account's keys. An old rows
  key that holds a meta (`id`) is a batch `rows` of an account named like the old batch: it is
  not the old batch's and stays.

  Input:
    KEYS[1] old meta
    KEYS[2] old rows
    KEYS[3] new meta
    KEYS[4] new rows

    ARGV[1] the account the old meta names

  Output:
    `moved`, `gone` (another process moved it first) or `conflict` (the account already
    has a batch of that id: both are left as they are).
]]
if redis.call('HGET', KEYS[1], 'account') ~= ARGV[1] then return 'gone' end
if redis.call('EXISTS', KEYS[3]) == 1 or redis.call('EXISTS', KEYS[4]) == 1 then
  return 'conflict'
end
redis.call('RENAME', KEYS[1], KEYS[3])
if redis.call('EXISTS', KEYS[2]) == 1 and redis.call('HEXISTS', KEYS[2], 'id') == 0 then
  redis.call('RENAME', KEYS[2], KEYS[4])
end
return 'moved'
