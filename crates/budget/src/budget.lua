-- The retry budget's arithmetic (crates/budget/src/model.rs) and its breaker's
-- (crates/budget/src/breaker.rs), step for step, on a Redis server, so that a fleet's decisions
-- are atomic and on the server's clock. A test feeds the same steps to this script and to the
-- model, and compares every answer.
--
-- KEYS[1]  the budget's state, a hash that expires once the bucket is idle and full and the
--          breaker has nothing to remember
-- KEYS[2]  the budget's terms, a hash that `retry budget set` writes and nothing expires
-- ARGV     operation ('admit', 'reserve', 'record', 'show' or 'set'); capacity, period (us),
--          ratio (or ''), window (us): the default terms, used while KEYS[2] holds none, or the
--          terms to keep for 'set'; latest (us, or '' for none); max debt (periods); the longest
--          period or window a term may give (us); now (us, or '' for the server's clock, which
--          the tool always uses); the breaker's terms to keep for 'set' ('' for none); the
--          probe's lease (us) for 'admit'; for 'record', the host (a hash, in hexadecimal), how
--          the run ended ('succeeded', 'gave_up', or 'unjudged', which counts nothing and gives
--          a probe's lease back) and whether it was the probe ('1' or '0');
--          the most hosts a breaker remembers; the longest cool-down, in first ones; for
--          'reserve', the wait the run's command asked for (us, or '' for none), which holds
--          every run's retries until it is over; the longest such hold (us); and the longest
--          this run waits for one (us, its RETRY_MAX_REQUESTED_WAIT)
-- Returns  {'counted', '0', damaged, period (us), admission ('closed', 'probe', 'open' or
--          'probing', when another run is the probe), left
--          (us), breaker ('1' or '0')} for 'admit'; {verdict, delay (us), damaged, period} for
--          'reserve' ('granted', 'held' when a requested wait is the longer, 'refused' past the
--          debt bound, or 'late' or 'late_held' when the token's or the held wait would reach
--          `latest`, no token taken); {'recorded', '0', damaged, period} for 'record';
--          {'set', '0', '0', period} for 'set'; for 'show', the stored state's fields, the kept
--          terms', the breaker's terms and state (empty where there are none), and the time.
--          `damaged` is 1 when a stored state or term was not one a run could store, and was
--          started over from.

local key, terms_key = KEYS[1], KEYS[2]
local operation = ARGV[1]

-- A job's history (crates/budget/src/history/), in a hash of its own (KEYS[1], KEYS[2] the
-- same): 'history' counts a run that ended as ARGV[2] ('c', 'f' or 'x') after ARGV[4]
-- milliseconds and keeps the last ARGV[3] in order; 'history_show' only reads it. A text no run
-- could have written starts over; durations that are not a list of numbers are dropped. The
-- durations live in a field of their own, which a script from before them never touches.
-- Returns {the stored text ('' for none), damaged ('1' or '0'), the durations ('' for none)}.
if operation == 'history' or operation == 'history_show' then
  local most = tonumber(ARGV[3])
  local stored = redis.call('HMGET', key, 'runs', 'durations')
  local text, durations = stored[1], stored[2] or ''
  if #durations > most * 13 or not string.match(durations, '^[%d ]*$') then durations = '' end
  local c, f, x, recent = string.match(text or '', '^(%d+) (%d+) (%d+) ([cfx%-]+)$')
  local plausible = c and #c <= 15 and #f <= 15 and #x <= 15 and #recent <= most
  if plausible and recent ~= '-' then
    local _, nc = string.gsub(recent, 'c', '')
    local _, nf = string.gsub(recent, 'f', '')
    local _, nx = string.gsub(recent, 'x', '')
    plausible = not string.find(recent, '-', 1, true) and nc <= tonumber(c)
      and nf <= tonumber(f) and nx <= tonumber(x)
  end
  local damaged = '0'
  if text and not plausible then damaged = '1' end
  if not plausible then
    c, f, x, recent = '0', '0', '0', '-'
    if operation == 'history_show' then text = nil end
  end
  if operation == 'history' then
    local kind = ARGV[2]
    c, f, x = tonumber(c), tonumber(f), tonumber(x)
    local most_runs = 999999999999999
    if kind == 'c' then c = math.min(c + 1, most_runs)
    elseif kind == 'f' then f = math.min(f + 1, most_runs)
    else x = math.min(x + 1, most_runs) end
    if recent == '-' then recent = '' end
    recent = string.sub(recent .. kind, -most)
    text = string.format('%d %d %d %s', c, f, x, recent)
    local took = string.match(ARGV[4] or '', '^%d%d?%d?%d?%d?%d?%d?%d?%d?%d?%d?%d?$') or '0'
    local kept = {}
    for word in string.gmatch(durations .. ' ' .. took, '%d+') do kept[#kept + 1] = word end
    durations = table.concat(kept, ' ', math.max(1, #kept - most + 1))
    redis.call('HSET', key, 'runs', text, 'durations', durations)
    -- A job nobody ran for a year is forgotten.
    redis.call('PEXPIRE', key, 366 * 86400 * 1000)
  end
  return {text or '', damaged, durations}
end
-- A job's terms and the lease of its run in progress (crates/budget/src/job/), KEYS[1] the
-- terms, a hash that `retry job set` writes and nothing expires, and KEYS[2] the lease, a hash
-- that expires unless its holder renews it. 'job_set' keeps ARGV[2], 'OVERLAP ALERT_AFTER
-- SCHEDULE' ('-' for a term it leaves as it is, 'none' for no schedule; the schedule last, as it
-- holds spaces), as the terms; for the others ARGV[2] is 'TOKEN [RUN]', the
-- holding run's secret token (the lease is held in it, and never shown) and, on 'job_hold', its
-- identity (shown as the holder's), and ARGV[3] the lease (ms). 'job_hold' takes the lease when
-- the overlap is 'skip' or 'wait' and no other run holds it, or answers 'inside' when the token
-- is the holder's own (a run inside the holder's attempts); 'job_renew' lengthens the run's
-- own; 'job_release' gives it back if it is still the run's; 'job_show' changes nothing.
-- Returns {overlap ('allow', 'skip' or 'wait'; 'allow' for none or a damaged one), the lease's
-- holder's identity ('' for none), 'free' (no lease needed), 'held', 'inside', 'busy' or 'lost',
-- the failed runs in a row that alert, as kept ('' for none; the job module checks it), and
-- the schedule ('' for none)}.
if string.sub(operation, 1, 4) == 'job_' then
  local run, shown = string.match(ARGV[2], '^(%S*) ?(%S*)$')
  local lease = tonumber(ARGV[3])
  if operation == 'job_set' then
    local overlap, alert_after, schedule = string.match(ARGV[2], '^(%S+) (%S+) (.+)$')
    if overlap and overlap ~= '-' then redis.call('HSET', key, 'overlap', overlap) end
    if alert_after and alert_after ~= '-' then redis.call('HSET', key, 'alert_after', alert_after) end
    if schedule == 'none' then redis.call('HDEL', key, 'schedule')
    elseif schedule and schedule ~= '-' then redis.call('HSET', key, 'schedule', schedule) end
  end
  local terms = redis.call('HMGET', key, 'overlap', 'alert_after', 'schedule')
  local overlap, alert_after, schedule = terms[1], terms[2] or '', terms[3] or ''
  if overlap ~= 'skip' and overlap ~= 'wait' then overlap = 'allow' end
  local held = redis.call('HMGET', terms_key, 'holder', 'running')
  local holder = held[1] or ''
  local running = held[2] or holder
  if operation == 'job_set' or operation == 'job_show' then
    return {overlap, running, 'free', alert_after, schedule}
  elseif operation == 'job_release' then
    if holder == run then redis.call('HDEL', terms_key, 'holder', 'running') end
    return {overlap, '', 'free', alert_after, schedule}
  elseif holder ~= '' and holder == run and operation == 'job_hold' then
    return {overlap, running, 'inside', alert_after, schedule}
  elseif holder ~= '' and holder ~= run then
    return {overlap, running, 'busy', alert_after, schedule}
  elseif operation == 'job_renew' and holder == '' then
    return {overlap, '', 'lost', alert_after, schedule}
  elseif overlap == 'allow' and operation == 'job_hold' then
    return {overlap, '', 'free', alert_after, schedule}
  end
  redis.call('HSET', terms_key, 'holder', run)
  if shown ~= '' then
    redis.call('HSET', terms_key, 'running', shown)
    running = shown
  end
  redis.call('PEXPIRE', terms_key, lease)
  return {overlap, running, 'held', alert_after, schedule}
end
local capacity = tonumber(ARGV[2])
local period = tonumber(ARGV[3])
local ratio = tonumber(ARGV[4]) or 0
local window = tonumber(ARGV[5])
local latest = tonumber(ARGV[6])
local max_debt = tonumber(ARGV[7])
local longest = tonumber(ARGV[8])
local now = tonumber(ARGV[9])
local max_hosts = tonumber(ARGV[15])
local longest_cool_down = tonumber(ARGV[16])
local asked = tonumber(ARGV[17])
local longest_hold = tonumber(ARGV[18])
local run_hold = tonumber(ARGV[19])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
end

local function words(text)
  local found = {}
  for word in string.gmatch(text or '', '%S+') do
    found[#found + 1] = word
  end
  return found
end

local function whole(text, most)
  local value = tonumber(text)
  if value and value == value and value >= 0 and value <= most and value == math.floor(value) then
    return value
  end
  return nil
end

-- The breaker's terms as `BreakerTerms::stored` writes them, if `set` could have kept them.
local function breaker_terms(text)
  local w = words(text)
  if #w ~= 5 then return nil end
  local terms = {give_ups = whole(w[1], 4294967295), window = tonumber(w[2]),
    share = tonumber(w[3]), hosts = whole(w[4], max_hosts), cool_down = tonumber(w[5])}
  if terms.give_ups and terms.give_ups >= 1 and terms.window and terms.window > 0
    and terms.window <= longest and terms.share and terms.share > 0 and terms.share <= 1
    and terms.hosts and terms.hosts >= 1 and terms.cool_down and terms.cool_down > 0
    and terms.cool_down <= longest then
    return terms
  end
  return nil
end

-- The breaker's state as `BreakerState::stored` writes it, if a run could have stored it.
local function breaker_state(text)
  local w = words(text)
  if #w ~= 9 then return nil end
  local count, time = 4294967295, 9223372036854775807
  local state = {started = whole(w[1], time), runs = whole(w[2], count),
    give_ups = whole(w[3], count), earlier_runs = whole(w[4], count),
    earlier_give_ups = whole(w[5], count), open_until = whole(w[6], time),
    openings = whole(w[7], count), probe_until = whole(w[8], time), hosts = {}}
  for _, name in ipairs({'started', 'runs', 'give_ups', 'earlier_runs', 'earlier_give_ups',
    'open_until', 'openings', 'probe_until'}) do
    if not state[name] then return nil end
  end
  if w[9] ~= '-' then
    for entry in string.gmatch(w[9], '[^,]+') do
      local host, at = string.match(entry, '^(%x+):(%d+)$')
      if not host then return nil end
      table.insert(state.hosts, {host, tonumber(at)})
    end
  end
  if #state.hosts > max_hosts then return nil end
  return state
end

local function fresh_breaker()
  return {started = 0, runs = 0, give_ups = 0, earlier_runs = 0, earlier_give_ups = 0,
    open_until = 0, openings = 0, probe_until = 0, hosts = {}}
end

local function stored_breaker(state)
  local hosts = {}
  for _, entry in ipairs(state.hosts) do
    table.insert(hosts, entry[1] .. ':' .. string.format('%d', entry[2]))
  end
  local listed = '-'
  if #hosts > 0 then listed = table.concat(hosts, ',') end
  return string.format('%d %d %d %d %d %d %d %d %s', state.started, state.runs, state.give_ups,
    state.earlier_runs, state.earlier_give_ups, state.open_until, state.openings,
    state.probe_until, listed)
end

local term_names = {'capacity', 'period', 'ratio', 'window'}
local kept = redis.call('HMGET', terms_key, 'capacity', 'period', 'ratio', 'window', 'breaker')
local names = {'tokens', 'earned', 'at', 'first', 'retries', 'refusals', 'not_before'}
local stored = redis.call('HMGET', key, 'tokens', 'earned', 'at', 'first', 'retries',
  'refusals', 'not_before', 'breaker')
if operation == 'show' then
  local shown = {}
  for index = 1, #names do
    shown[index] = stored[index] or ''
  end
  for index = 1, #term_names do
    table.insert(shown, kept[index] or '')
  end
  table.insert(shown, kept[5] or '')
  table.insert(shown, stored[8] or '')
  table.insert(shown, string.format('%d', now))
  return shown
end

local damaged = 0
local breaker = nil
if operation == 'set' then
  redis.call('HSET', terms_key, 'capacity', string.format('%d', capacity),
    'period', string.format('%.17g', period), 'ratio', ARGV[4],
    'window', string.format('%.17g', window))
  if ARGV[10] == '' then
    redis.call('HDEL', terms_key, 'breaker')
  else
    redis.call('HSET', terms_key, 'breaker', ARGV[10])
  end
elseif kept[1] or kept[2] or kept[3] or kept[4] then
  local c, p, w = tonumber(kept[1]), tonumber(kept[2]), tonumber(kept[4])
  local r = tonumber(kept[3] or '')
  local no_ratio = kept[3] == '' or kept[3] == '-'
  if c and p and w and c >= 1 and c <= 4294967295 and c == math.floor(c)
    and p > 0 and p <= longest and w > 0 and w <= longest
    and (no_ratio or (r and r > 0 and r <= 1)) then
    capacity, period, window = c, p, w
    ratio = r or 0
    if kept[5] then
      breaker = breaker_terms(kept[5])
      if not breaker then damaged = 1 end
    end
  else
    damaged = 1
  end
end

local tokens, earned, at = tonumber(stored[1]), tonumber(stored[2]), tonumber(stored[3])
local first = tonumber(stored[4]) or 0
local retries, refusals = tonumber(stored[5]) or 0, tonumber(stored[6]) or 0
-- A state kept before requested waits were shared has none.
local not_before = 0
if stored[7] then not_before = whole(stored[7], 9223372036854775807) or -1 end
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
  and not_before >= 0 and not_before <= now + longest_hold + period
if plausible then
  local elapsed = now - at
  if elapsed < 0 then elapsed = 0 end
  tokens = math.min(tokens + elapsed / period * capacity, capacity)
  if earned > 0 then earned = earned * math.exp(-elapsed / window) else earned = 0 end
  if now > at then at = now end
else
  if tokens or earned or at then damaged = 1 end
  tokens, earned, at, first, retries, refusals, not_before = capacity, 0, now, 0, 0, 0, 0
end

-- The breaker's state, when the budget has a breaker: a damaged one starts over.
local state = nil
if breaker then
  if stored[8] then
    state = breaker_state(stored[8])
    if not state then damaged = 1 end
  end
  state = state or fresh_breaker()
end

local function cool_down_after(openings)
  local factor = math.min(2 ^ math.min(openings, 62), longest_cool_down)
  return math.floor(breaker.cool_down * factor)
end

-- The model's `BreakerTerms::record`, for a run that ended at `now`.
local function record(host, ended, probe)
  if probe and state.probe_until ~= 0 then
    if ended == 'succeeded' then
      state = fresh_breaker()
    elseif ended == 'unjudged' then
      -- The probe found nothing out: another run may probe at once.
      state.probe_until = 0
    else
      state.openings = state.openings + 1
      state.open_until = now + cool_down_after(state.openings)
      state.probe_until = 0
    end
    return
  end
  if ended == 'unjudged' then return end
  local width = math.floor(breaker.window)
  local elapsed = math.max(now - state.started, 0)
  if state.started == 0 or elapsed >= 2 * width then
    state.started, state.runs, state.give_ups = now, 0, 0
    state.earlier_runs, state.earlier_give_ups = 0, 0
  elseif elapsed >= width then
    state.earlier_runs, state.earlier_give_ups = state.runs, state.give_ups
    state.started, state.runs, state.give_ups = state.started + width, 0, 0
  end
  state.runs = state.runs + 1
  if ended == 'gave_up' then
    state.give_ups = state.give_ups + 1
    for index = #state.hosts, 1, -1 do
      if state.hosts[index][1] == host then table.remove(state.hosts, index) end
    end
    table.insert(state.hosts, {host, now})
    if #state.hosts > max_hosts then
      local oldest = 1
      for index = 2, #state.hosts do
        if state.hosts[index][2] < state.hosts[oldest][2] then oldest = index end
      end
      table.remove(state.hosts, oldest)
    end
  end
  if state.open_until == 0 then
    local inside = 1 - math.min(math.max(now - state.started, 0) / breaker.window, 1)
    local runs = state.runs + state.earlier_runs * inside
    local give_ups = state.give_ups + state.earlier_give_ups * inside
    local since = math.max(now - math.floor(breaker.window), 0)
    local hosts = 0
    for _, entry in ipairs(state.hosts) do
      if entry[2] >= since then hosts = hosts + 1 end
    end
    if give_ups >= breaker.give_ups and give_ups >= breaker.share * runs
      and hosts >= breaker.hosts then
      state.open_until = now + cool_down_after(0)
      state.openings = 0
    end
  end
end

local reply
if operation == 'admit' then
  local admission, left = 'closed', 0
  if state and state.open_until ~= 0 then
    if now < state.open_until then
      admission, left = 'open', state.open_until - now
    elseif now < state.probe_until then
      admission, left = 'probing', state.probe_until - now
    else
      admission = 'probe'
      state.probe_until = math.max(now + math.floor(tonumber(ARGV[11])), now + 1)
    end
  end
  -- A run the breaker keeps from starting makes no first attempt to count.
  if admission ~= 'open' and admission ~= 'probing' then
    earned = earned + ratio
    first = first + 1
  end
  local has = '0'
  if breaker then has = '1' end
  reply = {'counted', '0', tostring(damaged), string.format('%.17g', period), admission,
    string.format('%d', left), has}
elseif operation == 'record' then
  if state then record(ARGV[12], ARGV[13], ARGV[14] == '1') end
  reply = {'recorded', '0', tostring(damaged), string.format('%.17g', period)}
else
  -- The model's `Terms::reserve`: a requested wait holds every run sharing the budget.
  if asked then not_before = math.max(not_before, now + asked) end
  local held = math.max(not_before - now, 0)
  if run_hold then held = math.min(held, run_hold) end
  local verdict, delay, debt = 'granted', 0, 0
  local from_earned = earned >= 1
  if not from_earned then
    debt = math.max(-(tokens - 1) / capacity, 0)
    delay = period * debt
  end
  if debt > max_debt then
    refusals = refusals + 1
    verdict = 'refused'
  elseif latest and math.max(delay, held) >= latest then
    if held > delay then verdict, delay = 'late_held', held else verdict = 'late' end
  else
    if from_earned then earned = earned - 1 else tokens = tokens - 1 end
    retries = retries + 1
    if held > delay then verdict, delay = 'held', held end
  end
  reply = {verdict, string.format('%.17g', delay), tostring(damaged),
    string.format('%.17g', period)}
end

redis.call('HSET', key,
  'tokens', string.format('%.17g', tokens), 'earned', string.format('%.17g', earned),
  'at', string.format('%d', at), 'first', string.format('%d', first),
  'retries', string.format('%d', retries), 'refusals', string.format('%d', refusals),
  'not_before', string.format('%d', not_before))
-- Idle and full, the state goes: a missing one is a full bucket. A breaker's state stays while
-- its windows, its cool-down or its probe may still count.
local full_in = math.max(capacity - tokens, 0) / capacity * period
local keep = math.max(full_in, 10 * window, not_before - now)
if state then
  redis.call('HSET', key, 'breaker', stored_breaker(state))
  keep = math.max(keep, 2 * breaker.window, state.open_until - now, state.probe_until - now)
else
  redis.call('HDEL', key, 'breaker')
end
-- (At most some thirty thousand years: PEXPIRE refuses what overflows.)
local ttl = math.min(math.ceil(keep / 1000) + 1000, 1e15)
redis.call('PEXPIRE', key, string.format('%d', ttl))
return reply
