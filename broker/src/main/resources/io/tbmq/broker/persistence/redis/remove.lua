-- Acknowledged messages (PUBACK for QoS 1, PUBCOMP for QoS 2) of one or more clients.
-- KEYS: the messages zset of each client. With no KEYS, the zsets come first in ARGV, after
--   ARGV[1] (the number of clients): the clients of one master (Redis Cluster), each checked as
--   in add.lua; a client whose slot this node does not serve right now is left out.
-- ARGV: [number of clients, their zsets,] then per client in that order: number of messages n,
--   then n message keys.
-- Returns the number of messages removed and, in a second element, the 1-based positions of the
-- clients left out.
local keys = KEYS
local a = 1
local checked = #KEYS == 0
if checked then
  keys = {}
  local clients = tonumber(ARGV[1])
  for i = 1, clients do keys[i] = ARGV[1 + i] end
  a = 2 + clients
end
local removed = 0
local skipped = {}
for c = 1, #keys do
  local n = tonumber(ARGV[a])
  a = a + 1
  if checked and type(redis.pcall('EXISTS', keys[c] .. '_0')) ~= 'number' then
    skipped[#skipped + 1] = c
  else
    for i = a, a + n - 1 do
      redis.call('DEL', ARGV[i])
      redis.call('ZREM', keys[c], ARGV[i])
    end
    removed = removed + n
  end
  a = a + n
end
return { removed, skipped }
