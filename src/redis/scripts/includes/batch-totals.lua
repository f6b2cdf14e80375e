--[[
  A batch's per-currency totals, kept in its meta as integer units (the amount times 10^scale,
  the currency's `t:<currency>:scale`) so that Redis adds them exactly: `t:<currency>:<bucket>:rows`
  and `:units`, buckets `requested`, `pending`, `succeeded`, `failed`, `cancelled`,
  `needs_reconciliation`. `unitsOf(amount, scale)` turns a decimal text into units;
  `moveTotal(meta, currency, units, from, to)` moves a row from one bucket to another;
  `amountOf(units, scale)` is the decimal text back.
]]
-- luacheck: push ignore 211 (a script includes the file for the functions it calls)
local function unitsOf(amount, scale)
  local whole, fraction = string.match(amount, '^(%d*)%.?(%d*)$')
  if not whole then return nil end
  fraction = string.sub(fraction .. string.rep('0', scale), 1, scale)
  local units = string.gsub(whole .. fraction, '^0+', '')
  return units == '' and '0' or units
end
local function moveTotal(meta, currency, units, from, to)
  local t = 't:' .. currency .. ':'
  redis.call('HINCRBY', meta, t .. from .. ':rows', -1)
  redis.call('HINCRBY', meta, t .. from .. ':units', '-' .. units)
  redis.call('HINCRBY', meta, t .. to .. ':rows', 1)
  redis.call('HINCRBY', meta, t .. to .. ':units', units)
end
local function amountOf(units, scale)
  local negative = string.sub(units, 1, 1) == '-'
  local digits = negative and string.sub(units, 2) or units
  if scale == 0 then return units end
  digits = string.rep('0', scale + 1 - #digits) .. digits
  local text = string.sub(digits, 1, #digits - scale) .. '.' .. string.sub(digits, #digits - scale + 1)
  return (negative and '-' or '') .. text
end
-- luacheck: pop
