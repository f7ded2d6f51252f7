-- The session ended (expiry or clean start): every key of the client goes.
-- KEYS[1] = messages zset, then the other keys of the client.
local elements = redis.call('ZRANGE', KEYS[1], 0, -1)
for _, k in ipairs(elements) do redis.call('DEL', k) end
for i = 1, #KEYS do redis.call('DEL', KEYS[i]) end
return #elements
