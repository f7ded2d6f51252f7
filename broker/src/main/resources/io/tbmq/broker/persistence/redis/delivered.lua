-- Marks the highest score sent to the client at least once, so a later session re-sends those
-- with DUP set. KEYS[1] = last packet id hash; ARGV[1] = score. Only ever raised.
local current = tonumber(redis.call('HGET', KEYS[1], 'delivered') or '0')
local score = tonumber(ARGV[1])
if score > current then redis.call('HSET', KEYS[1], 'delivered', score) end
return 1
