#include "broker/inbox_script.hpp"

#include "broker/dead_letter_record.hpp"
#include "broker/fence.hpp"
#include "broker/lua_effects.hpp"
#include "broker/lua_script.hpp"

namespace outbox::broker {

std::vector<std::string> inbox_script_keys(const keys& names,
                                           const std::string& lock) {
  return {names.processed,
          names.reserved,
          names.aggregate_seq,
          names.counters,
          names.dead_letter,
          names.seq_gaps(),
          lock.empty() ? names.consumer_lock() : lock};
}

const std::string& inbox_script_source() {
  static const std::string source = lua_key_type_check() + lua_fence_check() +
                                    lua_dead_letter_record() + lua_effects() +
                                    std::string{R"lua(
-- KEYS: processed, reserved, aggregate_seq, counters, dead_letter,
--       gaps (see below), the consumers' lock (see fence.hpp)
-- ARGV: the fence's holder ('' for none) or a JSON object of it and the
--       options (below), then the entries exactly as they came from the
--       queue, oldest first.
--
-- Dedup has two rules, and neither reads a clock. An event whose seq is at
-- or below its aggregate's applied seq was applied already (seqs are
-- delivered in order), unless `gaps` names that seq; this holds after
-- `outbox trim` deleted its record. Otherwise its record in `processed`
-- decides (HSETNX). `gaps` fields: "<aggregate_id>:<seq>" -> '1' for a seq
-- an out-of-order first delivery jumped over, 'dead' for a seq whose entry
-- was dead-lettered because its effect failed or its type is unknown
-- under unknown_types = dead-letter (another copy of it, put
-- back by a recovery or published again, is a duplicate: one record per
-- event), 'replay' once `outbox dead-letters replay` put it back (that
-- copy is applied again, late but not an order violation);
-- "<aggregate_id>:overflow" -> '1' when a jump was too long to record, so
-- that aggregate's duplicates are told by their records alone (and
-- `outbox trim` keeps its records).
--
-- A malformed entry has no identity to mark: a copy of one whose record is
-- among the newest `recent_records` of the dead-letter list (the same
-- bytes, dead-lettered for the same reason) is a duplicate too.
local processed, reserved, aggregate_seq = KEYS[1], KEYS[2], KEYS[3]
local counters, dead_letter = KEYS[4], KEYS[5]
local gaps, lock = KEYS[6], KEYS[7]
local first_entry = 2
-- Most skipped seqs one out-of-order delivery records.
local max_gap = 1024
-- Lua numbers are doubles: integers are exact up to 2^53 only.
local max_integer = 9007199254740992
local max_kept = 65536
-- How far back from the dead-letter list's tail a malformed entry's copy
-- is looked for: a recovered copy comes back within moments, and the look
-- stays bounded however much garbage piles up.
local recent_records = 1000

-- Scripts are not rolled back on error: check the keys' types before any
-- write, so a misconfigured key fails the call without half an effect.
local wrong = wrong_key_type({
  {processed, 'hash'}, {reserved, 'hash'}, {aggregate_seq, 'hash'},
  {counters, 'hash'}, {dead_letter, 'list'}, {gaps, 'hash'}})
if wrong then
  return wrong
end

-- ARGV[1]: the fence's holder, or a JSON object of it and the options
-- (broker/inbox_options.hpp): {"holder", "unknown_types", "known_types",
-- "effects", "effects_name", "effects_prefix"}. A holder never starts
-- with '{'.
local holder, unknown_types, known_types = ARGV[1], 'record', {}
-- The effects: the built-in ones (effects/orders.lua) unless the options
-- give a file's text (with its effects_prefix), or '' for none. The
-- built-in ones' keys live under the prefix KEYS[2], their reservation
-- hash, is named under: "<prefix>effects:inventory.reserved" (a KEYS[2]
-- named otherwise, as before the reservation was an effect, is refused
-- rather than written to).
local reservation = 'effects:inventory.reserved'
local effects_prefix = nil
if string.sub(reserved, -#reservation) == reservation then
  effects_prefix = string.sub(reserved, 1, #reserved - #reservation)
    .. 'effects:'
end
local effects, effects_name = builtin_effects, 'builtin:orders'
local effects_source = nil
-- The consumer's own database (consumer.sink): the types whose effect it
-- applies there, the event_ids it applied (or found applied) in this
-- batch, those it skipped because classify found them duplicates, those
-- whose effect it refused (why), and whether this call only classifies
-- (below).
local sink_types, sink_done, sink_skipped = {}, {}, {}
local sink_refused, classify = {}, false
if string.sub(ARGV[1], 1, 1) == '{' then
  local decoded, options = pcall(cjson.decode, ARGV[1])
  local bad = 'OUTBOX_OPTIONS ARGV[1] must be a JSON object: holder (a'
    .. ' string), unknown_types (record or dead-letter), known_types (an'
    .. ' array of strings)'
  if not decoded or type(options) ~= 'table' then
    return redis.error_reply(bad)
  end
  holder = options.holder or ''
  unknown_types = options.unknown_types or 'record'
  local types = options.known_types or {}
  -- cjson gives an object a table too: one with keys but no [1] is not
  -- an array.
  if type(holder) ~= 'string' or type(types) ~= 'table'
      or (next(types) ~= nil and types[1] == nil)
      or (unknown_types ~= 'record' and unknown_types ~= 'dead-letter') then
    return redis.error_reply(bad)
  end
  for _, name in ipairs(types) do
    if type(name) ~= 'string' then
      return redis.error_reply(bad)
    end
    known_types[name] = true
  end
  local named = options.sink_types or {}
  if type(named) ~= 'table' or (next(named) ~= nil and named[1] == nil) then
    return redis.error_reply('OUTBOX_OPTIONS sink_types must be an array of'
      .. ' strings')
  end
  for _, name in ipairs(named) do
    if type(name) ~= 'string' then
      return redis.error_reply('OUTBOX_OPTIONS sink_types must be an array'
        .. ' of strings')
    end
    sink_types[name] = true
    known_types[name] = true
  end
  if options.refused ~= nil then
    if type(options.refused) ~= 'table' or options.refused[1] ~= nil then
      return redis.error_reply('OUTBOX_OPTIONS refused must be an object of'
        .. ' event_id to reason')
    end
    for id, why in pairs(options.refused) do
      if type(why) ~= 'string' then
        return redis.error_reply('OUTBOX_OPTIONS refused must be an object'
          .. ' of event_id to reason')
      end
    end
    sink_refused = options.refused
  end
  local done = options.sink_done or {}
  if type(done) ~= 'table' or (next(done) ~= nil and done[1] == nil) then
    return redis.error_reply('OUTBOX_OPTIONS sink_done must be an array of'
      .. ' event_ids')
  end
  for _, id in ipairs(done) do
    sink_done[id] = true
  end
  local skipped = options.sink_skipped or {}
  if type(skipped) ~= 'table'
      or (next(skipped) ~= nil and skipped[1] == nil) then
    return redis.error_reply('OUTBOX_OPTIONS sink_skipped must be an array'
      .. ' of event_ids')
  end
  for _, id in ipairs(skipped) do
    sink_skipped[id] = true
  end
  classify = options.classify == true
  if options.effects_prefix ~= nil then
    if type(options.effects_prefix) ~= 'string'
        or options.effects_prefix == '' then
      return redis.error_reply('OUTBOX_OPTIONS effects_prefix must be a'
        .. ' string, not empty')
    end
    effects_prefix = options.effects_prefix
  end
  if options.effects == '' then
    effects = {}
  elseif options.effects ~= nil then
    effects_name = options.effects_name
    if type(options.effects) ~= 'string' or type(effects_name) ~= 'string'
        or not clean_text(effects_name) or options.effects_prefix == nil then
      return redis.error_reply('OUTBOX_OPTIONS effects, effects_name (text)'
        .. ' and effects_prefix must be strings')
    end
    effects_source = options.effects
  end
end
if next(effects) ~= nil and not effects_prefix then
  return redis.error_reply('OUTBOX_OPTIONS KEYS[2] must be named "<prefix>'
    .. reservation .. '" (outbox inbox-script --keys), or the options give'
    .. ' effects_prefix')
end
local store = effects_store(effects_prefix or '')
local refusal = fence_refusal(lock, holder)
if refusal then
  return refusal
end
-- The ACL is checked per command: a record refused after its effect wrote
-- would have the effect applied again by the retry. Asked once, before
-- any write.
if next(effects) ~= nil or effects_source then
  if not redis.acl_check_cmd('HSET', processed, 'event_id', 'record') then
    return redis.error_reply('NOPERM this user has no permissions to run'
      .. ' the \'hset\' command on ' .. processed .. ' (the record of an'
      .. ' event with an effect)')
  end
end
-- Loaded once the fence let the call through: a fenced-out consumer runs
-- none of the file.
if effects_source then
  local loaded, why = load_effects(effects_source, effects_name)
  if not loaded then
    return redis.error_reply('OUTBOX_EFFECTS ' .. why)
  end
  effects = loaded
end
for name in pairs(effects) do
  known_types[name] = true
end

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

-- One TIME per call: the batch applies at one instant.
local now = redis.call('TIME')
local at = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

-- The event's dedup record: what identifies it, the fields its effect
-- returned (what it did: `outbox verify` reads a reservation's sku and
-- qty there), when it was applied.
local function record(e, fields)
  local text = '{"event_type":' .. cjson.encode(e.event_type)
    .. ',"aggregate_id":' .. cjson.encode(e.aggregate_id)
    .. ',"seq":' .. int(e.seq)
  if fields then
    -- In the table's order: the record is read as JSON, by name.
    for name, value in pairs(fields) do
      text = text .. ',' .. cjson.encode(name) .. ':'
        .. (type(value) == 'number' and int(value) or cjson.encode(value))
    end
  end
  return text .. ',"at":' .. int(at) .. '}'
end

-- Applies one entry: {'ok', violation, committed_at}, {'dup', committed_at},
-- {'dead', reason}, or an error reply (Redis cannot take writes now:
-- nothing changed for this entry).
local function apply(text)
  local e, reason = check(text)
  if not e then
    return malformed(text, reason)
  end
  -- Applied in the consumer's own database before this call: recorded
  -- here without an effect of Redis's.
  local in_sink = sink_types[e.event_type] == true
  local committed_at = 0
  if integer_at_least(e.committed_at, 0) then
    committed_at = e.committed_at
  end
  local last = tonumber(redis.call('HGET', aggregate_seq, e.aggregate_id)) or 0
  local mark = false
  if e.seq <= last then
    mark = redis.call('HGET', gaps, gap(e.aggregate_id, e.seq))
    if mark == 'dead' or (not mark
        and redis.call('HEXISTS', gaps, overflow(e.aggregate_id)) == 0) then
      count('duplicates')
      return {'dup', committed_at}
    end
  end

  if unknown_types == 'dead-letter' and not known_types[e.event_type] then
    return set_aside_unknown(text, e, last, committed_at)
  end

  -- The sink refused its effect (and committed nothing of it): set aside,
  -- as an effect that failed in Redis.
  if sink_refused[e.event_id]
      and redis.call('HEXISTS', processed, e.event_id) == 0 then
    return set_aside(text, e, last,
                     'effect failed: ' .. sink_refused[e.event_id])
  end
  -- New here, yet its database did not apply it. Classified a duplicate,
  -- the inbox changed since (a dead letter replayed meanwhile): recording
  -- it would drop its effect, the batch is taken again. Otherwise the
  -- consumer could not read what this script reads (its decoder is
  -- stricter): set aside, never recorded without its effect.
  if in_sink and not sink_done[e.event_id]
      and redis.call('HEXISTS', processed, e.event_id) == 0 then
    if sink_skipped[e.event_id] then
      return redis.error_reply('OUTBOX_SINK_AGAIN ' .. e.event_id .. ' is'
        .. ' new to the inbox but its database did not apply it')
    end
    return set_aside(text, e, last, 'effect failed: the consumer could not'
      .. ' read the entry to apply it in its database')
  end

  -- An effect runs on the event's first delivery only, and its record is
  -- written after it, with what it returned, in one write. Nothing can
  -- refuse that write once the effect wrote: Redis checks memory, a
  -- replica's role and disk errors before a script's first write only,
  -- and the ACL was asked for it before any (see the fence above).
  local effect = not in_sink and effects[e.event_type]
  if effect then
    if redis.call('HEXISTS', processed, e.event_id) == 1 then
      count('duplicates')
      return {'dup', committed_at}
    end
    local applied, outcome = run_effect(text, e, last, effect)
    if not applied then
      return outcome
    end
    redis.call('HSET', processed, e.event_id, record(e, outcome))
  elseif redis.call('HSETNX', processed, e.event_id, record(e)) == 0 then
    count('duplicates')
    return {'dup', committed_at}
  end

  -- The first delivery of each event of an aggregate must follow seq order:
  -- seqs are contiguous from 1, so the next one is exactly last + 1. A seq
  -- that comes late after a jump is a violation; a dead-lettered one
  -- replayed is not (it was set aside on purpose).
  local violation = e.seq ~= last + 1 and mark ~= 'replay'
  if violation then
    count('order_violations')
  end
  if mark then
    redis.call('HDEL', gaps, gap(e.aggregate_id, e.seq))
  end
  advance(e, last)
  count('consumed')
  return {'ok', violation and 1 or 0, committed_at}
end

-- classify: for each entry {'new' or 'dup', event_id, event_type} as
-- apply() would find and read it, and nothing written: what a consumer
-- with its own database asks before it applies entries there. A malformed
-- entry is {'new', '', ''} (apply() dead-letters it).
local function classify_one(text)
  local e = check(text)
  if not e then
    return {'new', '', ''}
  end
  local last = tonumber(redis.call('HGET', aggregate_seq, e.aggregate_id)) or 0
  if e.seq <= last then
    local mark = redis.call('HGET', gaps, gap(e.aggregate_id, e.seq))
    if mark == 'dead' or (not mark
        and redis.call('HEXISTS', gaps, overflow(e.aggregate_id)) == 0) then
      return {'dup', e.event_id, e.event_type}
    end
  end
  if redis.call('HEXISTS', processed, e.event_id) == 1 then
    return {'dup', e.event_id, e.event_type}
  end
  return {'new', e.event_id, e.event_type}
end
if classify then
  local verdicts = {}
  for i = first_entry, #ARGV do
    verdicts[i - first_entry + 1] = classify_one(ARGV[i])
  end
  return verdicts
end

local results = {}
for i = first_entry, #ARGV do
  local outcome = apply(ARGV[i])
  if outcome.err then
    -- The entries before this one stay applied (no rollback): keep their
    -- counts; redelivered, they are duplicates.
    flush_counts()
    return outcome
  end
  results[i - first_entry + 1] = outcome
end
flush_counts()
return results
)lua"};
  return source;
}

} // namespace outbox::broker
