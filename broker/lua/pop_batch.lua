-- Moves up to ARGV[1] entries, head first, to the processing list's tail,
-- stopping before the batch would pass ARGV[2] bytes (one entry at least).
-- One LMOVE per entry keeps every step O(1) and never copies entries
-- beyond the cap into the script (LRANGE would, up to 256 MiB for a batch
-- of 1 MiB entries); the one entry that overshoots goes straight back to
-- the queue's head, so order is kept. Atomic: nobody sees half a batch.
--
-- An entry over ARGV[4] bytes (broker.max_consume_bytes, at or above what
-- the relays publish: someone pushed it by hand, or a relay ran with a
-- publishing limit above it) is never returned: it is
-- dropped from the processing list's tail with LTRIM (RPOP would copy it
-- again) and dead-lettered with at most ARGV[5] bytes of it and its size.
-- The script holds it once in memory (no command reads a list item's length
-- without its value); the consumer never sees it. It counts in the batch's
-- entries and bytes, so one call sets aside one huge entry, not a queue of
-- them.
--
-- KEYS[1]: the queue, KEYS[2]: the processing list, KEYS[3]: the
-- consumers' lock, KEYS[4]: the dead-letter list, KEYS[5]: the counters.
-- ARGV: max entries, max bytes, the fence's holder ('' for none), the
-- largest entry handed over (0: no limit), how much of a bigger one the
-- dead-letter record keeps.
-- Returns {entries, sizes of the entries set aside}.
local refusal = fence_refusal(KEYS[3], ARGV[3])
if refusal then
  return refusal
end
local max_entries, max_bytes = tonumber(ARGV[1]), tonumber(ARGV[2])
local max_consume_bytes, max_kept = tonumber(ARGV[4]), tonumber(ARGV[5])
if max_consume_bytes > 0 then
  -- Scripts are not rolled back: check before the first move.
  local wrong = wrong_key_type({{KEYS[4], 'list'}, {KEYS[5], 'hash'}})
  if wrong then
    return wrong
  end
end
local moved, oversized, bytes = {}, {}, 0
while #moved + #oversized < max_entries do
  local entry = redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'RIGHT')
  if not entry then break end
  if max_consume_bytes > 0 and #entry > max_consume_bytes then
    redis.call('LTRIM', KEYS[2], 0, -2)
    redis.call('RPUSH', KEYS[4], dead_letter_record(entry,
      'entry is ' .. #entry .. ' bytes, over broker.max_consume_bytes ('
        .. max_consume_bytes .. ')', max_kept))
    redis.call('HINCRBY', KEYS[5], 'dead_lettered', 1)
    oversized[#oversized + 1] = #entry
    bytes = bytes + #entry
    if bytes > max_bytes then break end
  else
    if #moved + #oversized > 0 and bytes + #entry > max_bytes then
      redis.call('LMOVE', KEYS[2], KEYS[1], 'RIGHT', 'LEFT')
      break
    end
    bytes = bytes + #entry
    moved[#moved + 1] = entry
  end
end
return {moved, oversized}
