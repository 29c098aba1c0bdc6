-- Integers as Redis wants them: tostring() would give "1e+15".
local function int(n)
  return string.format('%d', n)
end

-- Counter increments are summed over the call and written once, by
-- flush_counts(), before every return.
local counts = {consumed = 0, duplicates = 0, dead_lettered = 0,
                order_violations = 0}
local function count(name)
  counts[name] = counts[name] + 1
end
local function flush_counts()
  for name, n in pairs(counts) do
    if n > 0 then
      redis.call('HINCRBY', counters, name, n)
    end
  end
end

local function dead(text, reason)
  redis.call('RPUSH', dead_letter, dead_letter_record(text, reason, max_kept))
  count('dead_lettered')
  return {'dead', reason}
end

-- A malformed entry: dead-lettered, unless it is a copy of one already
-- there (see recent_records).
local function malformed(text, reason)
  local record = dead_letter_record(text, reason, max_kept)
  if redis.call('LPOS', dead_letter, record, 'RANK', -1,
                'MAXLEN', recent_records) then
    count('duplicates')
    return {'dup', 0}
  end
  redis.call('RPUSH', dead_letter, record)
  count('dead_lettered')
  return {'dead', reason}
end

-- Error codes of a Redis that cannot serve anyone for now (a replica, out
-- of memory...): not the entry's fault, so never a reason to dead-letter
-- it. The same list as server_state.cpp.
local server_states = {LOADING = true, BUSY = true, MASTERDOWN = true,
  TRYAGAIN = true, READONLY = true, OOM = true, NOREPLICAS = true,
  CLUSTERDOWN = true, MISCONF = true, UNBLOCKED = true}
local function server_state(err)
  return server_states[string.match(err, '^(%u+)') or ''] == true
end

-- A command this user may not run (an ACL checks each redis.call as it
-- runs; Redis 7.0 words it as ERR inside a script), or one the server does
-- not have: the same rule as command_refusal.cpp. Not the entry's fault:
-- retried like a server state, never dead-lettered.
local function refused(err)
  return string.find(err, '^NOPERM') ~= nil
    or string.find(err, "^ERR The user executing the script can't") ~= nil
    or string.find(err, '^ERR unknown command') ~= nil
    or string.find(err, '^ERR unknown subcommand') ~= nil
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

local function text_reason(name)
  return name .. ' must be UTF-8 text without control characters'
end

-- A required name (aggregate_id, event_type): why it is malformed unless it
-- is a non-empty string of clean text, else nil.
local function bad_name(e, name)
  if not nonempty_string(e[name]) then
    return name .. ' must be a non-empty string'
  end
  if not clean_text(e[name]) then
    return text_reason(name)
  end
end

-- An object, not an array (cjson decodes both to tables; an empty array
-- cannot be told from an empty object and passes).
local function object(v)
  return type(v) == 'table' and type(next(v)) ~= 'number'
end

-- The entry decoded, or nil and why it is malformed. The same checks, in
-- the same order and words, as decode() in entry.cpp.
local function check(text)
  local ok, e = pcall(cjson.decode, text)
  if not ok then
    return nil, 'entry is not valid JSON'
  end
  if not object(e) then
    return nil, 'entry must be a JSON object'
  end
  -- The format's version: absent (an older relay) or the one this script
  -- reads; a newer one would be misread.
  if e.v ~= nil and e.v ~= 1 then
    return nil, 'v must be 1 (the queue entry version this consumer reads)'
      .. ' or absent'
  end
  if not nonempty_string(e.event_id) or #e.event_id > 128 then
    return nil, 'event_id must be a non-empty string of at most 128 bytes'
  end
  if not clean_text(e.event_id) then
    return nil, text_reason('event_id')
  end
  local bad = bad_name(e, 'aggregate_id')
  if bad then
    return nil, bad
  end
  if not integer_at_least(e.seq, 1) then
    return nil, 'seq must be an integer >= 1 (at most 2^53)'
  end
  bad = bad_name(e, 'event_type')
  if bad then
    return nil, bad
  end
  if not object(e.payload) then
    return nil, 'payload must be a JSON object'
  end
  if e.headers ~= nil then
    if not object(e.headers) then
      return nil, 'headers must be a JSON object of strings'
    end
    for _, value in pairs(e.headers) do
      if type(value) ~= 'string' then
        return nil, 'headers must be a JSON object of strings'
      end
    end
  end
  if e.published_at ~= nil and not integer_at_least(e.published_at, 0) then
    return nil, 'published_at must be an integer >= 0'
  end
  return e
end

-- The field of `gaps` for a seq of an aggregate, and its overflow marker.
local function gap(aggregate_id, seq)
  return aggregate_id .. ':' .. int(seq)
end
local function overflow(aggregate_id)
  return aggregate_id .. ':overflow'
end

-- Moves an aggregate's applied seq to `seq` (a first delivery, or an entry
-- dead-lettered in its place), remembering the seqs a jump skipped.
local function advance(e, last)
  if e.seq > last + 1 then
    local upto = math.min(e.seq - 1, last + max_gap)
    for s = last + 1, upto do
      redis.call('HSET', gaps, gap(e.aggregate_id, s), '1')
    end
    if upto < e.seq - 1 then
      redis.call('HSET', gaps, overflow(e.aggregate_id), '1')
    end
  end
  if e.seq > last then
    redis.call('HSET', aggregate_seq, e.aggregate_id, int(e.seq))
  end
end

-- An event that cannot be applied (its effect failed, or its type is
-- unknown): dead-lettered, its seq marked 'dead', its aggregate moving on
-- without it; a replay applies it once the cause is fixed. The record
-- first: should a later write be refused (nothing is rolled back), the
-- entry is listed and its seq not yet marked, so a retry dead-letters it
-- again rather than absorb it unrecorded.
local function set_aside(text, e, last, reason)
  local reply = dead(text, reason)
  redis.call('HSET', gaps, gap(e.aggregate_id, e.seq), 'dead')
  advance(e, last)
  return reply
end

-- An event of a type the consumer has no effect for, under
-- unknown_types = dead-letter: set aside, unless its record says it was
-- applied already (recorded under the record policy).
local function set_aside_unknown(text, e, last, committed_at)
  if redis.call('HEXISTS', processed, e.event_id) == 1 then
    count('duplicates')
    return {'dup', committed_at}
  end
  return set_aside(text, e, last, 'unknown event type ' .. e.event_type
    .. ' (consumer.unknown_types is dead-letter)')
end

-- What a record may not take from its effect: the record's own fields.
local record_fields = {event_type = true, aggregate_id = true, seq = true,
  at = true, fields_problem = true}

-- `v` as text a record may show (what an effect returned may be anything:
-- a table's __tostring is not called, it could fail or return anything).
local function shown(v)
  local text = type(v)
  if type(v) == 'string' then
    text = "'" .. v .. "'"
  elseif type(v) == 'number' or type(v) == 'boolean' then
    text = tostring(v)
  end
  return clean_text(text) and #text <= 100 and text or '(not shown)'
end

-- Why the fields an effect returned cannot go into its record, or nil:
-- nothing, or a table of names (clean text) to strings (clean text) or
-- integers. (`fields_problem` itself is the record's field for it.)
local function fields_problem(fields)
  if fields == nil then
    return nil
  end
  if type(fields) ~= 'table' then
    return 'returned a ' .. type(fields) .. ' (nothing, or a table of'
      .. ' fields for its record)'
  end
  for name, value in pairs(fields) do
    if type(name) ~= 'string' or not clean_text(name) or record_fields[name]
        then
      return 'returned a field named ' .. shown(name) .. ' (names are'
        .. ' text, not event_type, aggregate_id, seq, at or fields_problem)'
    end
    if not ((type(value) == 'string' and clean_text(value))
        or integer_at_least(value, -max_integer)) then
      return 'returned ' .. name .. ' = ' .. shown(value) .. ' (a record'
        .. ' takes text or integers)'
    end
  end
  return nil
end

-- Runs `effect` on the event: true and the fields it returned for the
-- record, or false and the entry's reply (an error reply when Redis
-- refused the effect's first call: retried; else the event set aside).
local function run_effect(text, e, last, effect)
  local event = {event_id = e.event_id, aggregate_id = e.aggregate_id,
    seq = e.seq, event_type = e.event_type, payload = e.payload,
    headers = e.headers or {}}
  store.calls, store.failed = 0, nil
  local applied, result = pcall(effect, event, store)
  if applied then
    -- The effect is done: what its record cannot take is left out and
    -- named there, never a reason to set aside (a replay would apply it
    -- again).
    local problem = fields_problem(result)
    if problem then
      return true, {fields_problem = effects_name .. ': ' .. e.event_type
        .. ': ' .. problem}
    end
    return true, result
  end
  -- Redis refusing a command for its own state or the user's ACL is not
  -- the entry's fault: retried, as long as no call of the effect went
  -- through before it (Redis keeps a script's writes: a retry would make
  -- them twice). After one, the entry is set aside like any failure.
  local refusal = store.failed
  if refusal and store.calls == 0
      and (server_state(refusal) or refused(refusal)) then
    return false, redis.error_reply(refusal)
  end
  local message = lua_error_text(result)
  local at = effects_chunk .. ':'
  if string.sub(message, 1, #at) == at then
    message = effects_message(message, effects_name)
  else
    -- No line: an error raised without one, or by a tail call.
    message = effects_name .. ': ' .. e.event_type .. ': ' .. message
  end
  return false, set_aside(text, e, last, 'effect failed: ' .. message)
end

