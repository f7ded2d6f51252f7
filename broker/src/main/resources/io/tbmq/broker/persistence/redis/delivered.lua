-- Marks the highest score sent to the client at least once, so a later session re-sends those
-- with DUP set. KEYS[1] = marker; ARGV[1] = score. Only ever raised.
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local score = tonumber(ARGV[1])
if score > current then redis.call('SET', KEYS[1], score) end
return 1
