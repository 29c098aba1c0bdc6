-- The built-in effects (builtin:orders, effects/orders.lua), compiled with
-- the script rather than loaded per call, hidden from the same names as a
-- file's.
local builtin_effects = (function()
  local redis, KEYS, ARGV, _G, load, loadstring, dofile, loadfile, getfenv,
    setfenv, require, module = nil
--[[effects/orders.lua]]
end)()
