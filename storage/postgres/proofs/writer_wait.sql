-- (e) another writer on hot-e: waits for A's head row lock.
EXECUTE append_event('hot-e', 'T', '{"from":"C"}', NULL, NULL, NULL);
