--[[
  Marks the master's replication offset on this connection and counts the replicas `WAIT`
  can count: those online. The mark (a write, so that it is replicated) makes the `WAIT` that
  follows on this connection cover every write the master took before it, whichever connection
  made it; a script, so that a cluster routes it by its key to that master.

  Input:
    KEYS[1] the account's replication mark (redis/keys.ts, replicationMarkKey)

    ARGV[1] how long the mark is kept (ms)

  Output:
    The count (0 on a master without replicas).
]]
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
local info = redis.call('INFO', 'replication')
local online = 0
for _ in string.gmatch(info, 'state=online') do online = online + 1 end
return online
