-- The session ended (expiry or clean start): every key of the client goes.
-- KEYS[1] = messages zset, KEYS[2] = last packet id hash, then the other keys of the client.
-- The hash is written again with only the time of the clear ('cleared', Unix ms, Redis' clock):
-- remove.lua skips an acknowledgement made before it, one of the session before that another
-- node may still be trying to remove, since packet ids start again at 1. The mark expires after
-- an hour unless the next session stores a message (add.lua keeps the hash then).
local elements = redis.call('ZRANGE', KEYS[1], 0, -1)
for _, k in ipairs(elements) do redis.call('DEL', k) end
for i = 1, #KEYS do redis.call('DEL', KEYS[i]) end
local now = redis.call('TIME')
redis.call('HSET', KEYS[2], 'cleared', now[1] .. string.format('%03d', math.floor(tonumber(now[2]) / 1000)))
redis.call('EXPIRE', KEYS[2], 3600)
return #elements
