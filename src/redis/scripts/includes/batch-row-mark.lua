--[[
  markRow(meta, rows, row, applies, fields, counter, from, to): records a later event of a
  batch row once, in its report line: when the batch exists and `applies(line)` holds, sets
  `fields` (a list of {name, value}, in order) on the line, counts the meta's `counter`, and
  moves the row's money from the bucket `from` to `to` when they differ. Needs batch-totals.
]]
--- @include "batch-totals"
local function markRow(meta, rows, row, applies, fields, counter, from, to)
  if row == '' or redis.call('EXISTS', meta) == 0 then return end
  local line = redis.call('HGET', rows, row)
  local l = line and cjson.decode(line)
  if not (l and applies(l)) then return end
  for _, field in ipairs(fields) do l[field[1]] = field[2] end
  redis.call('HSET', rows, row, cjson.encode(l))
  redis.call('HINCRBY', meta, counter, 1)
  local scale = l.currency and redis.call('HGET', meta, 't:' .. l.currency .. ':scale')
  local units = scale and l.amount and unitsOf(l.amount, tonumber(scale))
  if units and from ~= to then moveTotal(meta, l.currency, units, from, to) end
end
