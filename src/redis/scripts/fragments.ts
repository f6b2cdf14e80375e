import { SENT_FIELD } from "../keys.js";

/**
 * Pieces of Lua shared by several scripts, written once. Each builds Lua text from the Lua
 * expressions it is given (a key such as `KEYS[2]`, a value such as `ARGV[1]`).
 */

/** True while `token` holds the lock or lease `key` (a lapsed one, or another's, is not held). */
export const lockHeld = (key: string, token: string): string =>
  `(redis.call('GET', ${key}) == ${token})`;

/** True when the job's hash `jobKey` records its request as sent. */
export const sentRecorded = (jobKey: string): string =>
  `(redis.call('HEXISTS', ${jobKey}, '${SENT_FIELD}') == 1)`;

/** Records in the job's hash `jobKey` that its request was sent, at `at`. */
export const recordSent = (jobKey: string, at: string): string =>
  `redis.call('HSET', ${jobKey}, '${SENT_FIELD}', ${at})`;

/** Drops the job's "sent" record (a request proved never sent). */
export const dropSent = (jobKey: string): string =>
  `redis.call('HDEL', ${jobKey}, '${SENT_FIELD}')`;

/**
 * Lua function `msText(ms)`: a time or a delay in ms as text, to the microsecond. Lua's own
 * `tostring` keeps 14 significant digits, 0.1 ms of an epoch time: a slot time stored so
 * loses up to 0.05 ms a reservation, more than the 40 ms margin of a second above 800
 * requests a second (at 3,000/s the 0.347 ms interval became 0.3).
 */
export const MS_TEXT = `
local function msText(ms)
  return string.format('%.3f', ms)
end`;

/** The states in which a batch can still be cancelled: its jobs may not all have been sent. */
export const CANCELLABLE_BATCH_STATES = [
  "validating",
  "awaiting_approval",
  "scheduled",
  "queued",
  "running",
] as const;

/**
 * How long past its `sealBy` a job of an unsealed batch is held: by then its batch is sealed,
 * resumed (a later `sealBy`) or, abandoned, cancelled by the sweep.
 */
export const SEAL_HOLD_MARGIN_MS = 1_000;

/**
 * Lua function `batchHold(meta, now)`: whether a job of the batch whose meta is `meta` must not
 * leave at `now` (ms), and for how long. -1: never (the batch was cancelled, or its approval
 * expired while pending); 0: until the batch is approved; a positive number: that many ms
 * (until its submission is sealed, at the latest its `sealBy`; until its `notBefore`; until its
 * pending approval expires); nil: it may leave. A batch still validating without `sealBy` was
 * submitted by a release that did not hold its jobs: they may leave, as they could then.
 */
export const BATCH_HOLD = `
local function batchHold(meta, now)
  local b = redis.call('HMGET', meta, 'state', 'approval', 'notBeforeMs', 'approvalExpiresMs', 'sealBy')
  if b[1] == 'cancelled' then return -1 end
  if b[1] == 'validating' and b[5] then
    return math.max(tonumber(b[5]) - now, 0) + ${SEAL_HOLD_MARGIN_MS}
  end
  if b[2] == 'pending' then
    local expires = tonumber(b[4] or '0')
    if expires <= 0 then return 0 end
    if now >= expires then return -1 end
    return expires - now
  end
  local notBefore = tonumber(b[3] or '0')
  if notBefore > now then return notBefore - now end
  return nil
end`;

/** Lua function `cancellable(state)`: whether a batch in `state` can be cancelled. */
export const CANCELLABLE = `
local function cancellable(state)
  return ${CANCELLABLE_BATCH_STATES.map((s) => `state == '${s}'`).join(" or ")}
end`;

/**
 * The batch completion rule, as Lua functions. `batchProgress(meta)` reads the meta's state and
 * counters; `allFinished(m)`: every accepted row has its result; `finishedState(m)`: the state
 * it then ends in, `completed` when every accepted row succeeded and no row was skipped, else
 * `completed_with_failures`.
 */
export const BATCH_COMPLETION = `
local function batchProgress(meta)
  return redis.call('HMGET', meta, 'state', 'accepted', 'done', 'n:succeeded', 'skipped')
end
local function allFinished(m)
  return tonumber(m[3]) >= tonumber(m[2])
end
local function finishedState(m)
  local ok = tonumber(m[4]) == tonumber(m[2]) and tonumber(m[5]) == 0
  return ok and 'completed' or 'completed_with_failures'
end`;

/**
 * Lua functions of a batch's per-currency totals, kept in its meta as integer units (the
 * amount times 10^scale, the currency's `t:<currency>:scale`) so that Redis adds them exactly:
 * `t:<currency>:<bucket>:rows` and `:units`, buckets `requested`, `pending`, `succeeded`,
 * `failed`, `cancelled`, `needs_reconciliation`. `unitsOf(amount, scale)` turns a decimal text
 * into units; `moveTotal(meta, currency, units, from, to)` moves a row from one bucket to
 * another; `amountOf(units, scale)` is the decimal text back.
 */
export const BATCH_TOTALS = `
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
end`;

/** Batch meta fields an event's data carries when the batch has them. */
const OPTIONAL_EVENT_FIELDS = [
  "startedAt",
  "finishedAt",
  "cancelledAt",
  "cancelReason",
  "notBefore",
  "submittedBy",
  "approvalExpiresAt",
  "approvedBy",
  "approvedAt",
  "rejectedBy",
  "rejectedAt",
]
  .map((f) => `'${f}'`)
  .join(", ");

/**
 * Lua function `batchEvent(stream, maxLen, meta, type, at)`: appends the event `type` to the
 * results stream in the event envelope (results/event-envelope.ts), with the batch's summary
 * and totals as its meta holds them, or, from a job's hold (it has `jobId`), the job's. Its id
 * derives from account, batch or job, and type: each type happens at most once to a batch or
 * a job, and a receiver sees the same id however it is delivered.
 * Needs BATCH_TOTALS.
 */
export const BATCH_EVENT = `
local function batchEvent(stream, maxLen, meta, type, at)
  local f = redis.call('HGETALL', meta)
  local m = {}
  for i = 1, #f, 2 do m[f[i]] = f[i + 1] end
  local function n(field) return tonumber(m[field] or '0') end
  local counts, totals = {}, {}
  for field, value in pairs(m) do
    local kind = string.match(field, '^n:(.+)$')
    if kind then counts[kind] = tonumber(value) end
    local currency, bucket, part = string.match(field, '^t:(%u+):([%a_]+):(%a+)$')
    if currency then
      totals[currency] = totals[currency] or {}
      totals[currency][bucket] = totals[currency][bucket] or {}
      totals[currency][bucket][part] = value
    end
  end
  for currency, buckets in pairs(totals) do
    local scale = n('t:' .. currency .. ':scale')
    for _, b in pairs(buckets) do
      b.rows = tonumber(b.rows or '0')
      b.amount = amountOf(b.units or '0', scale)
      b.units = nil
    end
  end
  local data
  if m.jobId then
    data = {
      jobId = m.jobId, account = m.account, kind = m.kind,
      idempotencyKey = m.idempotencyKey, state = m.state, createdAt = m.createdAt
    }
  else
    data = {
      batchId = m.id, account = m.account, kind = m.kind, state = m.state,
      rows = n('rows'), accepted = n('accepted'), invalid = n('invalid'),
      duplicates = n('duplicates'), finished = n('done'), counts = counts,
      createdAt = m.createdAt
    }
    if next(totals) ~= nil then data.totals = totals end
  end
  for _, field in ipairs({${OPTIONAL_EVENT_FIELDS}}) do
    if m[field] then data[field] = m[field] end
  end
  local key = (m.account or '') .. '\\0' .. (m.id or m.jobId or '') .. '\\0' .. type
  local id = 'evt_' .. string.sub(redis.sha1hex(key), 1, 32)
  local event = cjson.encode({ type = type, id = id, timestamp = at, data = data })
  redis.call('XADD', stream, 'MAXLEN', '~', maxLen, '*', 'event', event)
end`;
