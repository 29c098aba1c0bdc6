local function wrong_key_type(expected)
  for _, key in ipairs(expected) do
    local kind = redis.call('TYPE', key[1]).ok
    if kind ~= 'none' and kind ~= key[2] then
      return redis.error_reply('WRONGTYPE key ' .. key[1] .. ' holds a '
        .. kind .. ', expected a ' .. key[2])
    end
  end
  return nil
end
