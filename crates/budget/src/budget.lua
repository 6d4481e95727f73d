-- The retry budget's arithmetic (crates/budget/src/model.rs), step for step, on a Redis server,
-- so that a fleet's decisions are atomic and on the server's clock. A test feeds the same steps
-- to this script and to the model, and compares every answer.
--
-- KEYS[1]  the budget's state, a hash that expires once the bucket is idle and full
-- KEYS[2]  the budget's terms, a hash that `retry budget set` writes and nothing expires
-- ARGV     operation ('first', 'reserve', 'show' or 'set'); capacity, period (us), ratio (or
--          ''), window (us): the default terms, used while KEYS[2] holds none, or the terms to
--          keep for 'set'; latest (us, or '' for none); max debt (periods); the longest period
--          or window a term may give (us); now (us, or '' for the server's clock, which the tool
--          always uses)
-- Returns  {verdict, delay (us), damaged, period (us)} for 'reserve' ('granted' or 'refused');
--          {'counted', '0', damaged, period} for 'first'; {'set', '0', '0', period} for 'set';
--          for 'show', the stored state's fields and the kept terms' (empty where there are
--          none), and the time. `damaged` is 1 when a stored state or term was not one a run
--          could store, and was started over from.

local key, terms_key = KEYS[1], KEYS[2]
local operation = ARGV[1]
local capacity = tonumber(ARGV[2])
local period = tonumber(ARGV[3])
local ratio = tonumber(ARGV[4]) or 0
local window = tonumber(ARGV[5])
local latest = tonumber(ARGV[6])
local max_debt = tonumber(ARGV[7])
local longest = tonumber(ARGV[8])
local now = tonumber(ARGV[9])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
end

local term_names = {'capacity', 'period', 'ratio', 'window'}
local kept = redis.call('HMGET', terms_key, unpack(term_names))
local names = {'tokens', 'earned', 'at', 'first', 'retries', 'refusals'}
local stored = redis.call('HMGET', key, unpack(names))
if operation == 'show' then
  for index = 1, #names do
    stored[index] = stored[index] or ''
  end
  for index = 1, #term_names do
    table.insert(stored, kept[index] or '')
  end
  table.insert(stored, string.format('%d', now))
  return stored
end

local damaged = 0
if operation == 'set' then
  redis.call('HSET', terms_key, 'capacity', string.format('%d', capacity),
    'period', string.format('%.17g', period), 'ratio', ARGV[4],
    'window', string.format('%.17g', window))
elseif kept[1] or kept[2] or kept[3] or kept[4] then
  local c, p, w = tonumber(kept[1]), tonumber(kept[2]), tonumber(kept[4])
  local r = tonumber(kept[3] or '')
  local no_ratio = kept[3] == '' or kept[3] == '-'
  if c and p and w and c >= 1 and c <= 4294967295 and c == math.floor(c)
    and p > 0 and p <= longest and w > 0 and w <= longest
    and (no_ratio or (r and r > 0 and r <= 1)) then
    capacity, period, window = c, p, w
    ratio = r or 0
  else
    damaged = 1
  end
end

local tokens, earned, at = tonumber(stored[1]), tonumber(stored[2]), tonumber(stored[3])
local first = tonumber(stored[4]) or 0
local retries, refusals = tonumber(stored[5]) or 0, tonumber(stored[6]) or 0
if operation == 'set' then
  -- The state carried over to the new terms, as the model's `adopt` does.
  if tokens and tokens == tokens then
    tokens = math.max(math.min(tokens, capacity), -capacity * max_debt)
    redis.call('HSET', key, 'tokens', string.format('%.17g', tokens))
  end
  return {'set', '0', '0', string.format('%.17g', period)}
end

local plausible = tokens and earned and at
  and tokens == tokens and tokens <= capacity and tokens >= -capacity * max_debt
  and earned == earned and earned >= 0 and earned <= 1e12
  and at >= 0 and at <= now + period
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
  'retries', string.format('%d', retries), 'refusals', string.format('%d', refusals))
-- Idle and full, the state goes: a missing one is a full bucket.
local full_in = math.max(capacity - tokens, 0) / capacity * period
-- (At most some thirty thousand years: PEXPIRE refuses what overflows.)
local ttl = math.min(math.ceil(math.max(full_in, 10 * window) / 1000) + 1000, 1e15)
redis.call('PEXPIRE', key, string.format('%d', ttl))
return {verdict, string.format('%.17g', delay), tostring(damaged), string.format('%.17g', period)}
