-- Acknowledged messages (PUBACK for QoS 1, PUBCOMP for QoS 2) of one or more clients.
-- KEYS: the messages zset of each client.
-- ARGV: per client (in KEYS order): number of messages n, then n message keys.
local a = 1
local removed = 0
for c = 1, #KEYS do
  local n = tonumber(ARGV[a])
  a = a + 1
  for i = a, a + n - 1 do
    redis.call('DEL', ARGV[i])
    redis.call('ZREM', KEYS[c], ARGV[i])
  end
  a = a + n
  removed = removed + n
end
return removed
