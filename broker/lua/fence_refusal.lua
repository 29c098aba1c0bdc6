local function fence_refusal(lock, holder)
  if holder == '' then
    return nil
  end
  -- A lapsed lock is no longer ours either: another process may have
  -- taken it, recovered our entries and lost it again since.
  local current = redis.call('GET', lock)
  if current ~= holder then
    return redis.error_reply('OUTBOX_FENCED the consumers lock ' .. lock
      .. ' is held by ' .. (current or 'nobody') .. ', not by ' .. holder)
  end
  return nil
end
