--[[
  msText(ms): a time or a delay in ms as text, to the microsecond. Lua's own `tostring` keeps
  14 significant digits, 0.1 ms of an epoch time: a slot time stored so loses up to 0.05 ms a
  reservation, more than the 40 ms margin of a second above 800 requests a second (at 3,000/s
  the 0.347 ms interval became 0.3).
]]
local function msText(ms)
  return string.format('%.3f', ms)
end
