-- Everything stored for one client, in score order, dropping references whose message expired.
-- KEYS[1] = messages zset, KEYS[2] = last packet id hash (fields delivered: highest score sent at
-- least once, score: last score assigned).
-- Returns: delivered marker, last score assigned, then score, packet-id key, value triples.
local zkey = KEYS[1]
local elements = redis.call('ZRANGE', zkey, 0, -1, 'WITHSCORES')
local state = redis.call('HMGET', KEYS[2], 'delivered', 'score')
local out = { state[1] or '0', state[2] or '0' }
for i = 1, #elements, 2 do
  local key = elements[i]
  local value = redis.call('GET', key)
  if value then
    out[#out + 1] = elements[i + 1]
    out[#out + 1] = key
    out[#out + 1] = value
  else
    redis.call('ZREM', zkey, key)
  end
end
return out
