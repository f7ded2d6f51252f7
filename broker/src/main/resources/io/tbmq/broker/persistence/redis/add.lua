-- Stores messages for one or more DEVICE clients in one atomic call: one client, a slot group
-- (Redis Cluster), the clients of one master (Redis Cluster), or any clients on standalone Redis.
-- KEYS: for each client i, 2 keys: messages zset, last packet id hash (fields: id = last packet
--   id, score = its score, delivered = highest score sent at least once, s<stream> = last
--   source offset applied from that stream). With no KEYS, the same keys come first in ARGV,
--   after ARGV[2]: the caller sent the clients of one master by the slots it last knew of, so
--   each client's slot is checked before anything is written, and a client whose slot this node
--   does not serve right now (moved, or being moved) is left out: its result is -1.
-- ARGV[1] = per-client limit, ARGV[2] = number of clients, [the keys,] then per client:
--   key prefix of its message strings, 1 if the client is connected (what is stored now is sent
--   right after: mark it delivered, so a later session re-sends it with DUP), number of messages n,
--   then n times: stream (source partition/persisted partition), source offset, ttl seconds, value
-- Per client, a message already applied (source offset not above the last one applied from that
-- stream) is skipped, so replays from Kafka never store a message twice. A stream is read in order
-- by one consumer, which is what makes "not above the last one" mean "seen before".
-- Scores keep growing past 65535 and across an emptied set while packet ids wrap to 1.
-- One HMGET and one HSET per client: the per-message work is the message string and its zset entry.
-- Returns per client: a flat list of packet id, score pairs for the messages stored (0, 0 for a
-- skipped one).
local limit = tonumber(ARGV[1])
local clients = tonumber(ARGV[2])
local a = 3
local keys = KEYS
local checked = #KEYS == 0
if checked then
  keys = {}
  for i = 1, 2 * clients do keys[i] = ARGV[a]; a = a + 1 end
end
-- A slot served here and not being moved: a key that never exists (packet ids start at 1) can be
-- read. While the slot moves, reading a missing key is redirected, which a script sees as an error.
local function served(zkey)
  return type(redis.pcall('EXISTS', zkey .. '_0')) == 'number'
end
local here = {}
for c = 1, clients do here[c] = not checked or served(keys[2 * c - 1]) end
local result = {}
for c = 1, clients do
  local zkey = keys[2 * c - 1]
  local stateKey = keys[2 * c]
  local prefix = ARGV[a]
  local connected = ARGV[a + 1] == '1'
  local n = tonumber(ARGV[a + 2])
  a = a + 3
  if not here[c] then
    a = a + 4 * n
    result[c] = -1
  else
  local fields = { 'id', 'score' }
  local fieldOf = {}
  for m = 0, n - 1 do
    local partition = ARGV[a + 4 * m]
    if fieldOf[partition] == nil then
      fields[#fields + 1] = 's' .. partition
      fieldOf[partition] = #fields
    end
  end
  local state = redis.call('HMGET', stateKey, unpack(fields))
  local last = tonumber(state[1]) or 0
  local score = tonumber(state[2]) or 0
  local applied = {}
  for partition, i in pairs(fieldOf) do applied[partition] = tonumber(state[i]) or -1 end
  -- Trim first, so a wrapped packet id never lands on a message still stored under it.
  local excess = redis.call('ZCARD', zkey) + n - limit
  if excess > 0 then
    local old = redis.call('ZRANGE', zkey, 0, excess - 1)
    for _, k in ipairs(old) do redis.call('DEL', k) end
    redis.call('ZREMRANGEBYRANK', zkey, 0, excess - 1)
  end
  local ids = {}
  local stored = false
  for m = 1, n do
    local partition = ARGV[a]
    local offset = tonumber(ARGV[a + 1])
    local ttl = ARGV[a + 2]
    local value = ARGV[a + 3]
    a = a + 4
    if offset <= applied[partition] then
      ids[#ids + 1] = 0
      ids[#ids + 1] = 0
    else
      applied[partition] = offset
      last = last + 1
      if last > 65535 then last = 1 end
      score = score + 1
      local key = prefix .. last
      redis.call('SET', key, value, 'EX', ttl)
      redis.call('ZADD', zkey, score, key)
      ids[#ids + 1] = last
      ids[#ids + 1] = score
      stored = true
    end
  end
  -- A call with more messages for the client than the limit: its oldest go too.
  local over = redis.call('ZCARD', zkey) - limit
  if over > 0 then
    local old = redis.call('ZRANGE', zkey, 0, over - 1)
    for _, k in ipairs(old) do redis.call('DEL', k) end
    redis.call('ZREMRANGEBYRANK', zkey, 0, over - 1)
  end
  if stored then
    local update = { 'id', last, 'score', score }
    for partition, offset in pairs(applied) do
      update[#update + 1] = 's' .. partition
      update[#update + 1] = offset
    end
    if connected then
      update[#update + 1] = 'delivered'
      update[#update + 1] = score
    end
    redis.call('HSET', stateKey, unpack(update))
  end
  result[c] = ids
  end
end
return result
