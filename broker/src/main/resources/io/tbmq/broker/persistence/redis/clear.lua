-- The session ended (expiry or clean start): every key of the client goes.
-- KEYS[1] = messages zset, KEYS[2] = last packet id hash, KEYS[3] = the clear's mark.
-- The mark holds the time of the clear (Unix ms, Redis' clock) for ten minutes: remove.lua skips an
-- acknowledgement made before it, one of the session before that another node may still be trying
-- to remove, since packet ids start again at 1. It is a key of its own, so that the session's hash
-- never expires (a node of the release before, writing that hash, would keep a time to live on it).
local elements = redis.call('ZRANGE', KEYS[1], 0, -1)
for _, k in ipairs(elements) do redis.call('DEL', k) end
redis.call('DEL', KEYS[1], KEYS[2])
local now = redis.call('TIME')
redis.call('SET', KEYS[3], now[1] .. string.format('%03d', math.floor(tonumber(now[2]) / 1000)), 'PX', 600000)
return #elements
