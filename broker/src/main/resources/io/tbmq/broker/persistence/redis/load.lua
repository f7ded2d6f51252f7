-- Everything stored for one client, in score order, dropping references whose message expired.
-- KEYS[1] = messages zset, KEYS[2] = delivered marker (highest score sent at least once),
-- KEYS[3] = last packet id ("packetId:score").
-- Returns: delivered marker, last score assigned, then score, packet-id key, value triples.
local zkey = KEYS[1]
local elements = redis.call('ZRANGE', zkey, 0, -1, 'WITHSCORES')
local lastValue = redis.call('GET', KEYS[3]) or '0:0'
local sep = string.find(lastValue, ':', 1, true)
local out = { redis.call('GET', KEYS[2]) or '0', sep and string.sub(lastValue, sep + 1) or '0' }
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
