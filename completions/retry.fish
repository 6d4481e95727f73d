complete -c retry -s n -l max-attempts -d 'Make at most N attempts in total, the first included; a whole number or \'unlimited\'' -r
complete -c retry -l base -d 'Wait this long after the first failure; the scale of every later wait (e.g. 250ms, 2s; 0s: never wait)' -r
complete -c retry -l cap -d 'Never wait longer than this between two attempts (e.g. 30s, 5m)' -r
complete -c retry -l multiplier -d 'Multiply the longest possible wait by FACTOR after each retry; a number of at least 1 (e.g. 1.5)' -r
complete -c retry -l jitter -d 'Spread the waits with this strategy, so that clients failing together retry apart' -r -f -a "none\t'No randomness: wait exactly the exponential ceiling'
full\t'Wait a uniform random time between 0 and the ceiling'
equal\t'Wait half the ceiling plus a uniform random time up to the other half'
decorrelated\t'Wait a uniform random time between base and three times the previous wait, capped'"
complete -c retry -l retry-on -d 'Retry only when the exit status is in CODES (e.g. 1,75-78); default: any failure' -r
complete -c retry -l stop-on -d 'Never retry when the exit status is in CODES (e.g. 2,64-78); default: none' -r
complete -c retry -l success-on -d 'Count these exit statuses as success (e.g. 0,3)' -r
complete -c retry -s t -l timeout -d 'End an attempt that runs longer than this (SIGTERM, then SIGKILL after --kill-after); it counts as status 124 (e.g. 30s)' -r
complete -c retry -l max-time -d 'Limit the whole run, attempts and waits together, counted from the start (e.g. 10m); default: none' -r
complete -c retry -l kill-after -d 'Send SIGKILL this long after SIGTERM to an attempt still running (after a timeout, the deadline or a passed-on signal)' -r
complete -c retry -l retry-on-output -d 'Retry a failure only if its stdout or stderr has a line matching REGEX (e.g. \'\\b503\\b\'); may be repeated: any match counts' -r
complete -c retry -l stop-on-output -d 'Never retry an attempt whose stdout or stderr has a line matching REGEX (e.g. \'HTTP 40[134]\'); may be repeated' -r
complete -c retry -l reset-after -d 'Start the backoff and the attempt count over after a failed attempt that ran at least this long (e.g. 10m)' -r
complete -c retry -l report -d 'Write a JSON summary of the run to FILE when it ends (e.g. retry-report.json)' -r -F
complete -c retry -l seed -d 'Seed the jitter\'s random numbers with N (0 to 2^64-1) to make the waits reproducible, or with \'host\' to derive it from the host name and the command; default: random' -r
complete -c retry -l splay -d 'Wait a random time below DURATION before the first attempt, drawn from the seed, so that a fleet\'s cron jobs spread out (e.g. 5m)' -r
complete -c retry -l budget -d 'Share a retry budget with every other run on this machine naming the same budget (e.g. the API host they call)' -r
complete -c retry -l budget-rate -d 'Let the budget hold at most N tokens, regaining N every DURATION; each retry takes one' -r
complete -c retry -l budget-dir -d 'Keep budget state in DIR [default: $XDG_STATE_HOME/retry/budgets, or ~/.local/state/retry/budgets]' -r -F
complete -c retry -l log-format -d 'Write the tool\'s own messages on stderr in this form (json: one object per line)' -r -f -a "text\t'One line of prose per event, prefixed `retry:`'
json\t'One JSON object per line, with an `event` key'"
complete -c retry -l foreground -d 'Keep COMMAND in retry\'s own process group, like `timeout --foreground`: timeouts and signals then reach only COMMAND, not its children'
complete -c retry -l replay-stdin -d 'Read stdin to its end before the first attempt, and give every attempt the same bytes'
complete -c retry -l hold-output -d 'Hold each attempt\'s stdout: write it to stdout only for the attempt that succeeds, to stderr for the others'
complete -c retry -l shell -d 'Join COMMAND and its ARGs with spaces and run the line with `sh -c`'
complete -c retry -l plan -d 'Print the waits these options give, and exit without running COMMAND'
complete -c retry -s q -l quiet -d 'Print none of the tool\'s own messages (errors in its own usage still print)'
complete -c retry -s v -l verbose -d 'Also report each attempt\'s start and a success'
complete -c retry -s h -l help -d 'Print help (see more with \'--help\')'
complete -c retry -s V -l version -d 'Print version'
