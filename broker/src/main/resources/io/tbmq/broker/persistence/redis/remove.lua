-- Acknowledged messages (PUBACK for QoS 1, PUBCOMP for QoS 2) of one or more clients.
-- KEYS: per client its messages zset and last packet id hash. With no KEYS, the same keys come
--   first in ARGV, after ARGV[1] (the number of clients): the clients of one master (Redis
--   Cluster), each checked as in add.lua; a client whose slot this node does not serve right now
--   is left out.
-- ARGV: [number of clients, their keys,] then per client in that order: when (Unix ms) its oldest
--   acknowledgement in the call was made, number of messages n, then n message keys.
-- A client cleared since (clear.lua's 'cleared' mark, Unix ms) is skipped: the acknowledgements
-- are of the session before, which another node may have tried to remove since, and packet ids
-- started again at 1, so they could name messages of the next session.
-- Returns the number of messages removed and, in a second element, the 1-based positions of the
-- clients left out.
local keys = KEYS
local a = 1
local checked = #KEYS == 0
local clients = #KEYS / 2
if checked then
  clients = tonumber(ARGV[1])
  keys = {}
  for i = 1, 2 * clients do keys[i] = ARGV[1 + i] end
  a = 2 + 2 * clients
end
local removed = 0
local skipped = {}
for c = 1, clients do
  local zkey = keys[2 * c - 1]
  local made = tonumber(ARGV[a])
  local n = tonumber(ARGV[a + 1])
  a = a + 2
  if checked and type(redis.pcall('EXISTS', zkey .. '_0')) ~= 'number' then
    skipped[#skipped + 1] = c
  elseif tonumber(redis.call('HGET', keys[2 * c], 'cleared') or '0') < made then
    for i = a, a + n - 1 do
      redis.call('DEL', ARGV[i])
      redis.call('ZREM', zkey, ARGV[i])
    end
    removed = removed + n
  end
  a = a + n
end
return { removed, skipped }
