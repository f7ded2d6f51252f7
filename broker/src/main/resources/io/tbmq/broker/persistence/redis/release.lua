-- PUBREC received: the message itself is no longer needed, only that PUBREL is owed.
-- ARGV = message keys; each becomes the marker 'R' with its remaining time to live.
for i = 1, #ARGV do
  if redis.call('EXISTS', ARGV[i]) == 1 then
    redis.call('SET', ARGV[i], 'R', 'KEEPTTL')
  end
end
return #ARGV
