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

-- Whether `value` is an array: cjson gives an object a table too, and one
-- with keys but no [1] is not an array.
local function is_array(value)
  return type(value) == 'table' and (next(value) == nil or value[1] ~= nil)
end

-- Marks each item of options[field], an array (none for empty), true in
-- every table of `sets`. `items` says what they must be, as the error
-- reply names it: 'strings' are checked to be, 'event_ids' are taken as
-- they come. Returns that error reply when they are not.
local function add_array_option(options, field, items, sets)
  local list = options[field] or {}
  local bad = 'OUTBOX_OPTIONS ' .. field .. ' must be an array of ' .. items
  if not is_array(list) then
    return redis.error_reply(bad)
  end
  for _, item in ipairs(list) do
    if items == 'strings' and type(item) ~= 'string' then
      return redis.error_reply(bad)
    end
    for _, set in ipairs(sets) do
      set[item] = true
    end
  end
end

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
  if type(holder) ~= 'string' or not is_array(types)
      or (unknown_types ~= 'record' and unknown_types ~= 'dead-letter') then
    return redis.error_reply(bad)
  end
  for _, name in ipairs(types) do
    if type(name) ~= 'string' then
      return redis.error_reply(bad)
    end
    known_types[name] = true
  end
  local bad_types = add_array_option(options, 'sink_types', 'strings',
    {sink_types, known_types})
  if bad_types then
    return bad_types
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
  local bad_ids = add_array_option(options, 'sink_done', 'event_ids',
    {sink_done})
    or add_array_option(options, 'sink_skipped', 'event_ids', {sink_skipped})
  if bad_ids then
    return bad_ids
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

