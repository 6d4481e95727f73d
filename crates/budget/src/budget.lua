-- The retry budget's arithmetic (src/budget/model.rs), step for step, on one hash of a Redis
-- server, so that a fleet's decisions are atomic and on the server's clock. A test feeds the
-- same steps to this script and to the model, and compares every answer.
--
-- KEYS[1]  the budget's hash
-- ARGV     operation ('first', 'reserve' or 'show'), capacity, period (us), ratio (or ''),
--          window (us), latest (us, or '' for none), max debt (periods),
--          now (us, or '' for the server's clock, which the tool always uses); 'show' reads
--          none but now
-- Returns  {verdict, delay (us), damaged} for 'reserve' ('granted' or 'refused'); {'counted',
--          '0', damaged} for 'first'; for 'show', the stored fields (empty where there are none)
--          and the time.

local key = KEYS[1]
local operation = ARGV[1]
local capacity = tonumber(ARGV[2])
local period = tonumber(ARGV[3])
local ratio = tonumber(ARGV[4]) or 0
local window = tonumber(ARGV[5])
local latest = tonumber(ARGV[6])
local max_debt = tonumber(ARGV[7])
local now = tonumber(ARGV[8])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
end

local names = {'tokens', 'earned', 'at', 'first', 'retries', 'refusals', 'capacity', 'period',
  'window'}
local stored = redis.call('HMGET', key, unpack(names))
if operation == 'show' then
  for index = 1, #names do
    stored[index] = stored[index] or ''
  end
  table.insert(stored, string.format('%d', now))
  return stored
end

local tokens, earned, at = tonumber(stored[1]), tonumber(stored[2]), tonumber(stored[3])
local first = tonumber(stored[4]) or 0
local retries, refusals = tonumber(stored[5]) or 0, tonumber(stored[6]) or 0
local plausible = tokens and earned and at
  and tokens == tokens and tokens <= capacity and tokens >= -capacity * max_debt
  and earned == earned and earned >= 0 and earned <= 1e12
  and at >= 0 and at <= now + period
local damaged = 0
if plausible then
  local elapsed = now - at
  if elapsed < 0 then elapsed = 0 end
  tokens = math.min(tokens + elapsed / period * capacity, capacity)
  if earned > 0 then earned = earned * math.exp(-elapsed / window) else earned = 0 end
  if now > at then at = now end
else
  if tokens or earned or at then damaged = 1 end
  tokens, earned, at, first, retries, refusals = capacity, 0, now, 0, 0, 0
end

local verdict, delay = 'counted', 0
if operation == 'first' then
  earned = earned + ratio
  first = first + 1
elseif earned >= 1 then
  earned = earned - 1
  retries = retries + 1
  verdict = 'granted'
else
  local left = tokens - 1
  local debt = math.max(-left / capacity, 0)
  delay = period * debt
  if debt > max_debt or (latest and delay >= latest) then
    refusals = refusals + 1
    verdict = 'refused'
  else
    tokens = left
    retries = retries + 1
    verdict = 'granted'
  end
end

redis.call('HSET', key,
  'tokens', string.format('%.17g', tokens), 'earned', string.format('%.17g', earned),
  'at', string.format('%d', at), 'first', string.format('%d', first),
  'retries', string.format('%d', retries), 'refusals', string.format('%d', refusals),
  'capacity', string.format('%d', capacity), 'period', string.format('%.17g', period),
  'window', string.format('%.17g', window))
-- Idle and full, the hash goes: a missing one is a full bucket.
local full_in = math.max(capacity - tokens, 0) / capacity * period
-- (At most some thirty thousand years: PEXPIRE refuses what overflows.)
local ttl = math.min(math.ceil(math.max(full_in, 10 * window) / 1000) + 1000, 1e15)
redis.call('PEXPIRE', key, string.format('%d', ttl))
return {verdict, string.format('%.17g', delay), tostring(damaged)}
