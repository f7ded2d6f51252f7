-- Acknowledged messages (PUBACK for QoS 1, PUBCOMP for QoS 2) of one or more clients.
-- KEYS: per client its messages zset and its clear's mark (see clear.lua). With no KEYS, the same
--   keys come first in ARGV, after ARGV[1] (the number of clients): the clients of one master
--   (Redis Cluster), each checked as in add.lua; a client whose slot this node does not serve right
--   now is left out.
-- ARGV: [number of clients, their keys,] then per client in that order: number of messages n, then
--   n times: message key, when (Unix ms) its acknowledgement was made.
-- An acknowledgement made before the client's last clear is skipped: it is of the session before,
-- another node may have tried to remove it since, and packet ids started again at 1, so its key
-- may name a message of the next session.
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
  local n = tonumber(ARGV[a])
  a = a + 1
  if checked and type(redis.pcall('EXISTS', zkey .. '_0')) ~= 'number' then
    skipped[#skipped + 1] = c
  else
    local cleared = tonumber(redis.call('GET', keys[2 * c]) or '0')
    for i = a, a + 2 * n - 1, 2 do
      if cleared < tonumber(ARGV[i + 1]) then
        redis.call('DEL', ARGV[i])
        redis.call('ZREM', zkey, ARGV[i])
        removed = removed + 1
      end
    end
  end
  a = a + 2 * n
end
return { removed, skipped }
