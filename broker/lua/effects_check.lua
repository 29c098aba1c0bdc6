-- ARGV: the effects file's text, its name. Returns the event types it
-- gives an effect, sorted, or an error reply saying why it cannot be used.
local effects, why = load_effects(ARGV[1], ARGV[2])
if not effects then
  return redis.error_reply('OUTBOX_EFFECTS ' .. why)
end
local types = {}
for event_type in pairs(effects) do
  types[#types + 1] = event_type
end
table.sort(types)
return types
