-- Stores messages for one or more DEVICE clients in one atomic call: one client, a slot group
-- (Redis Cluster), or any clients at all on standalone Redis.
-- KEYS: for each client i, 4 keys: messages zset, last packet id, applied source offsets (hash),
--   delivered marker (highest score sent at least once).
-- ARGV[1] = per-client limit, ARGV[2] = number of clients, then per client:
--   key prefix of its message strings, 1 if the client is connected (what is stored now is sent
--   right after: mark it delivered, so a later session re-sends it with DUP), number of messages n,
--   then n times: source partition, source offset, ttl seconds, value
-- Per client, a message already applied (source offset not above the last one applied from that
-- source partition) is skipped, so replays from Kafka never store a message twice.
-- The last packet id key holds "packetId:score", so scores keep growing past 65535 and across an
-- emptied set while packet ids wrap to 1.
-- Returns per client: a flat list of packet id, score pairs for the messages stored (0, 0 for a
-- skipped one).
local limit = tonumber(ARGV[1])
local clients = tonumber(ARGV[2])
local a = 3
local result = {}
for c = 1, clients do
  local zkey = KEYS[4 * c - 3]
  local lastKey = KEYS[4 * c - 2]
  local srcKey = KEYS[4 * c - 1]
  local deliveredKey = KEYS[4 * c]
  local prefix = ARGV[a]
  local connected = ARGV[a + 1] == '1'
  local n = tonumber(ARGV[a + 2])
  a = a + 3
  local lastValue = redis.call('GET', lastKey) or '0:0'
  local sep = string.find(lastValue, ':', 1, true)
  local last = tonumber(string.sub(lastValue, 1, (sep or 0) - 1)) or tonumber(lastValue) or 0
  local score = sep and tonumber(string.sub(lastValue, sep + 1)) or 0
  -- Trim first, so a wrapped packet id never lands on a message still stored under it.
  local excess = redis.call('ZCARD', zkey) + n - limit
  if excess > 0 then
    local old = redis.call('ZRANGE', zkey, 0, excess - 1)
    for _, k in ipairs(old) do redis.call('DEL', k) end
    redis.call('ZREMRANGEBYRANK', zkey, 0, excess - 1)
  end
  local ids = {}
  local applied = {}
  local stored = false
  for m = 1, n do
    local partition = ARGV[a]
    local offset = tonumber(ARGV[a + 1])
    local ttl = ARGV[a + 2]
    local value = ARGV[a + 3]
    a = a + 4
    if applied[partition] == nil then
      applied[partition] = tonumber(redis.call('HGET', srcKey, partition) or '-1')
    end
    if offset <= applied[partition] then
      ids[#ids + 1] = 0
      ids[#ids + 1] = 0
    else
      applied[partition] = offset
      last = last + 1
      if last > 65535 then last = 1 end
      -- The score keeps growing past 65535 while the packet id wraps to 1.
      score = score + 1
      local key = prefix .. last
      redis.call('SET', key, value, 'EX', ttl)
      redis.call('ZADD', zkey, score, key)
      ids[#ids + 1] = last
      ids[#ids + 1] = score
      stored = true
    end
  end
  if stored then
    local fields = {}
    for p, o in pairs(applied) do
      fields[#fields + 1] = p
      fields[#fields + 1] = o
    end
    redis.call('HSET', srcKey, unpack(fields))
    redis.call('SET', lastKey, last .. ':' .. score)
    if connected then redis.call('SET', deliveredKey, score) end
  end
  result[c] = ids
end
return result
