-- Text a key may be made of: valid UTF-8 (cjson copies any bytes it is
-- given) without control characters (C0, DEL, C1), which would end up in
-- hash fields, log lines and terminals. The same rule as clean_text() in
-- entry.cpp.
local function clean_text(s)
  -- Plain ASCII without controls (nearly every name) needs no walk: one
  -- pattern match in C instead of a Lua step per byte. Anchored: an
  -- unanchored search would start a match at every byte (0.4 us of an
  -- entry's 10).
  if string.find(s, '^[ -~]*$') then
    return true
  end
  local i, n = 1, #s
  while i <= n do
    local c = string.byte(s, i)
    if c < 0x20 or c == 0x7F then return false end
    if c >= 0x80 then
      local length, min, max = 0, 0x80, 0xBF
      if c >= 0xC2 and c <= 0xDF then
        length = 2
        if c == 0xC2 then min = 0xA0 end -- no C1 control (U+0080..U+009F)
      elseif c >= 0xE0 and c <= 0xEF then
        length = 3
        if c == 0xE0 then min = 0xA0 end -- no overlong form
        if c == 0xED then max = 0x9F end -- no surrogate
      elseif c >= 0xF0 and c <= 0xF4 then
        length = 4
        if c == 0xF0 then min = 0x90 end -- no overlong form
        if c == 0xF4 then max = 0x8F end -- nothing past U+10FFFF
      else
        return false
      end
      local second = string.byte(s, i + 1)
      if not second or second < min or second > max then return false end
      for k = 2, length - 1 do
        local b = string.byte(s, i + k)
        if not b or b < 0x80 or b > 0xBF then return false end
      end
      i = i + length
    else
      i = i + 1
    end
  end
  return true
end

local function lua_error_text(err)
  if type(err) == 'table' then
    return tostring(err.err or err[1] or '?')
  end
  return tostring(err)
end

-- Commands of one key: any other argument is not a key. DEL, UNLINK,
-- EXISTS, TOUCH and PFCOUNT take several keys, so only one here.
local effect_commands = {}
for _, name in ipairs({'GET', 'SET', 'SETNX', 'SETEX', 'PSETEX', 'GETSET',
    'GETDEL', 'INCR', 'INCRBY', 'INCRBYFLOAT', 'DECR', 'DECRBY', 'APPEND',
    'STRLEN', 'EXPIRE', 'PEXPIRE', 'EXPIREAT', 'PEXPIREAT', 'PERSIST',
    'TTL', 'PTTL', 'TYPE', 'HSET', 'HSETNX', 'HGET', 'HMGET', 'HGETALL',
    'HDEL', 'HEXISTS', 'HINCRBY', 'HINCRBYFLOAT', 'HLEN', 'HKEYS', 'HVALS',
    'LPUSH', 'RPUSH', 'LPOP', 'RPOP', 'LLEN', 'LRANGE', 'LINDEX', 'LSET',
    'LREM', 'LTRIM', 'SADD', 'SREM', 'SISMEMBER', 'SMEMBERS', 'SCARD',
    'ZADD', 'ZINCRBY', 'ZREM', 'ZSCORE', 'ZRANGE', 'ZRANGEBYSCORE',
    'ZREMRANGEBYSCORE', 'ZCARD', 'ZRANK', 'XADD', 'XLEN', 'XTRIM', 'PFADD'}) do
  effect_commands[name] = 'one'
end
for _, name in ipairs({'DEL', 'UNLINK', 'EXISTS', 'TOUCH', 'PFCOUNT'}) do
  effect_commands[name] = 'only'
end

-- What an effect reaches Redis through. `failed` is Redis's error of the
-- call that failed, `calls` how many went through before it, so that the
-- inbox tells a refusal it may retry (nothing of the effect written) from
-- one it must not (writes of the effect would be made twice).
local function effects_store(prefix)
  local store = {calls = 0, is_text = clean_text}
  function store.key(name)
    return prefix .. tostring(name)
  end
  function store.call(command, key, ...)
    local name = string.upper(tostring(command))
    local kind = effect_commands[name]
    if not kind then
      error('an effect may not run ' .. name
        .. ' (commands of one key under the effects\' prefix only)', 2)
    end
    if kind == 'only' and select('#', ...) > 0 then
      error('an effect runs ' .. name .. ' on one key at a time', 2)
    end
    if type(key) ~= 'string' or string.sub(key, 1, #prefix) ~= prefix then
      error('key ' .. tostring(key) .. ' is outside the effects\' prefix '
        .. prefix .. ' (name keys with store.key)', 2)
    end
    local reply = redis.pcall(name, key, ...)
    if type(reply) == 'table' and reply.err then
      store.failed = reply.err
      error(reply.err, 2)
    end
    store.calls = store.calls + 1
    return reply
  end
  return store
end

-- The file is compiled under this short chunk name (Lua cuts long ones),
-- and its messages given the file's real name.
local effects_chunk = 'effects'
local function effects_message(message, name)
  local at = effects_chunk .. ':'
  if string.sub(message, 1, #at) == at then
    return name .. ':' .. string.sub(message, #at + 1)
  end
  return name .. ': ' .. message
end

-- Hidden from the chunk, on its first line so that its line numbers stay
-- the file's: the ways to the script's own globals and to `redis`.
local effects_hidden = 'local redis, KEYS, ARGV, _G, load, loadstring,'
  .. ' dofile, loadfile, getfenv, setfenv, require, module = nil; '

local function load_effects(source, name)
  local chunk, err = loadstring(effects_hidden .. source,
                                '=' .. effects_chunk)
  if not chunk then
    return nil, effects_message(lua_error_text(err), name)
  end
  local loaded, effects = pcall(chunk)
  if not loaded then
    return nil, effects_message(lua_error_text(effects), name)
  end
  if type(effects) ~= 'table' then
    return nil, name .. ' must return a table of functions by event type'
      .. ' (got a ' .. type(effects) .. ')'
  end
  -- A plain copy, read raw: a metatable of the file's may not answer
  -- for types it does not list, nor change them later.
  local copy = {}
  local event_type, effect = next(effects)
  while event_type ~= nil do
    if type(event_type) ~= 'string' then
      return nil, name .. ': the table\'s keys must be event types'
        .. ' (strings), not a ' .. type(event_type)
    end
    if type(effect) ~= 'function' then
      return nil, name .. ': the effect of ' .. event_type
        .. ' must be a function (got a ' .. type(effect) .. ')'
    end
    copy[event_type] = effect
    event_type, effect = next(effects, event_type)
  end
  return copy
end

