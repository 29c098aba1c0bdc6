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
