local function dead_letter_record(text, reason, max_kept)
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
  return cjson.encode({reason = reason, entry = kept, size = #text,
                       truncated = #kept < #text})
end
