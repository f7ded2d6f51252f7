-- Acknowledged messages: PUBACK (QoS 1) or PUBCOMP (QoS 2).
-- KEYS[1] = messages zset; ARGV = message keys.
for i = 1, #ARGV do
  redis.call('DEL', ARGV[i])
  redis.call('ZREM', KEYS[1], ARGV[i])
end
return #ARGV
