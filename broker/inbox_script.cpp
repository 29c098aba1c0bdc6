#include "broker/inbox_script.hpp"

namespace outbox::broker {

const std::string& inbox_script_source() {
  static const std::string source = R"lua(
-- KEYS: processed, reserved, aggregate_seq, counters, dead_letter
-- ARGV[1]: the entry exactly as it came from the queue.
local processed, reserved, aggregate_seq = KEYS[1], KEYS[2], KEYS[3]
local counters, dead_letter = KEYS[4], KEYS[5]
local text = ARGV[1]
-- Lua numbers are doubles: integers are exact up to 2^53 only.
local max_integer = 9007199254740992
local max_kept = 65536

-- Scripts are not rolled back on error: check the keys' types before any
-- write, so a misconfigured key fails the call without half an effect.
local expected = {
  {processed, 'hash'}, {reserved, 'hash'}, {aggregate_seq, 'hash'},
  {counters, 'hash'}, {dead_letter, 'list'}}
for _, key in ipairs(expected) do
  local kind = redis.call('TYPE', key[1]).ok
  if kind ~= 'none' and kind ~= key[2] then
    return redis.error_reply('WRONGTYPE key ' .. key[1] .. ' holds a '
      .. kind .. ', expected a ' .. key[2])
  end
end

-- Integers as Redis wants them: tostring() would give "1e+15".
local function int(n)
  return string.format('%d', n)
end

local function dead(reason)
  local kept = text
  if #kept > max_kept then
    -- Cut on a UTF-8 character boundary (continuation bytes are 10xxxxxx).
    local cut = max_kept
    while cut > 0 do
      local b = string.byte(kept, cut + 1)
      if b < 128 or b >= 192 then break end
      cut = cut - 1
    end
    kept = string.sub(kept, 1, cut)
  end
  local record = {reason = reason, entry = kept, size = #text,
                  truncated = #kept < #text}
  redis.call('RPUSH', dead_letter, cjson.encode(record))
  redis.call('HINCRBY', counters, 'dead_lettered', 1)
  return {'dead', reason}
end

local function nonempty_string(v)
  return type(v) == 'string' and #v > 0
end

-- cjson turns JSON null into cjson.null (a userdata) and every number into
-- a double; type() and math.floor() tell them apart.
local function integer_at_least(v, min)
  return type(v) == 'number' and v == math.floor(v) and v >= min
    and v <= max_integer
end

-- An object, not an array (cjson decodes both to tables; an empty array
-- cannot be told from an empty object and passes).
local function object(v)
  return type(v) == 'table' and type(next(v)) ~= 'number'
end

-- The same checks, in the same order and words, as decode() in entry.cpp.
local ok, e = pcall(cjson.decode, text)
if not ok then
  return dead('entry is not valid JSON')
end
if not object(e) then
  return dead('entry must be a JSON object')
end
if not nonempty_string(e.event_id) or #e.event_id > 128 then
  return dead('event_id must be a non-empty string of at most 128 bytes')
end
if not nonempty_string(e.aggregate_id) then
  return dead('aggregate_id must be a non-empty string')
end
if not integer_at_least(e.seq, 1) then
  return dead('seq must be an integer >= 1 (at most 2^53)')
end
if not nonempty_string(e.event_type) then
  return dead('event_type must be a non-empty string')
end
if not object(e.payload) then
  return dead('payload must be a JSON object')
end
if e.published_at ~= nil and not integer_at_least(e.published_at, 0) then
  return dead('published_at must be an integer >= 0')
end
local order_placed = e.event_type == 'OrderPlaced'
if order_placed then
  if not nonempty_string(e.payload.sku) then
    return dead('payload.sku must be a non-empty string')
  end
  if not integer_at_least(e.payload.qty, 1) then
    return dead('payload.qty must be an integer >= 1 (at most 2^53)')
  end
end

local now = redis.call('TIME')
local at = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local result = '{"event_type":' .. cjson.encode(e.event_type)
  .. ',"aggregate_id":' .. cjson.encode(e.aggregate_id)
  .. ',"seq":' .. int(e.seq)
if order_placed then
  result = result .. ',"sku":' .. cjson.encode(e.payload.sku)
    .. ',"qty":' .. int(e.payload.qty)
end
result = result .. ',"at":' .. int(at) .. '}'

if redis.call('HSETNX', processed, e.event_id, result) == 0 then
  redis.call('HINCRBY', counters, 'duplicates', 1)
  return {'dup'}
end

if order_placed then
  local applied = redis.pcall('HINCRBY', reserved, e.payload.sku,
                              int(e.payload.qty))
  if type(applied) == 'table' and applied.err then
    -- Overflow or a non-integer value: undo the dedup record so nothing
    -- changed, and let the caller see the error.
    redis.call('HDEL', processed, e.event_id)
    return redis.error_reply('effect failed for ' .. e.event_id .. ': '
      .. applied.err)
  end
end

-- The first delivery of each event of an aggregate must follow seq order:
-- seqs are contiguous from 1, so the next one is exactly last + 1.
local last = tonumber(redis.call('HGET', aggregate_seq, e.aggregate_id)) or 0
local violation = e.seq ~= last + 1
if violation then
  redis.call('HINCRBY', counters, 'order_violations', 1)
end
redis.call('HSET', aggregate_seq, e.aggregate_id, int(math.max(last, e.seq)))
redis.call('HINCRBY', counters, 'consumed', 1)
return {'ok', violation and 1 or 0}
)lua";
  return source;
}

} // namespace outbox::broker
