# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_retry_global_optspecs
    string join \n n/max-attempts= base= cap= multiplier= jitter= retry-on= stop-on= success-on= t/timeout= max-time= kill-after= foreground replay-stdin retry-on-output= stop-on-output= hold-output reset-after= report= shell seed= splay= budget= budget-rate= budget-dir= plan log-format= q/quiet v/verbose h/help V/version
end

function __fish_retry_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_retry_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_retry_using_subcommand
    set -l cmd (__fish_retry_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c retry -n "__fish_retry_needs_command" -s n -l max-attempts -d 'Make at most N attempts in total, the first included; a whole number or \'unlimited\'' -r
complete -c retry -n "__fish_retry_needs_command" -l base -d 'Wait this long after the first failure; the scale of every later wait (e.g. 250ms, 2s; 0s: never wait)' -r
complete -c retry -n "__fish_retry_needs_command" -l cap -d 'Never wait longer than this between two attempts (e.g. 30s, 5m)' -r
complete -c retry -n "__fish_retry_needs_command" -l multiplier -d 'Multiply the longest possible wait by FACTOR after each retry; a number of at least 1 (e.g. 1.5)' -r
complete -c retry -n "__fish_retry_needs_command" -l jitter -d 'Spread the waits with this strategy, so that clients failing together retry apart' -r -f -a "none\t'No randomness: wait exactly the exponential ceiling'
full\t'Wait a uniform random time between 0 and the ceiling'
equal\t'Wait half the ceiling plus a uniform random time up to the other half'
decorrelated\t'Wait a uniform random time between base and three times the previous wait, capped'"
complete -c retry -n "__fish_retry_needs_command" -l retry-on -d 'Retry only when the exit status is in CODES (e.g. 1,75-78); default: any failure' -r
complete -c retry -n "__fish_retry_needs_command" -l stop-on -d 'Never retry when the exit status is in CODES (e.g. 2,64-78); default: none' -r
complete -c retry -n "__fish_retry_needs_command" -l success-on -d 'Count these exit statuses as success (e.g. 0,3)' -r
complete -c retry -n "__fish_retry_needs_command" -s t -l timeout -d 'End an attempt that runs longer than this (SIGTERM, then SIGKILL after --kill-after); it counts as status 124 (e.g. 30s)' -r
complete -c retry -n "__fish_retry_needs_command" -l max-time -d 'Limit the whole run, attempts and waits together, counted from the start (e.g. 10m); default: none' -r
complete -c retry -n "__fish_retry_needs_command" -l kill-after -d 'Send SIGKILL this long after SIGTERM to an attempt still running (after a timeout, the deadline or a passed-on signal)' -r
complete -c retry -n "__fish_retry_needs_command" -l retry-on-output -d 'Retry a failure only if its stdout or stderr has a line matching REGEX (e.g. \'\\b503\\b\'); may be repeated: any match counts' -r
complete -c retry -n "__fish_retry_needs_command" -l stop-on-output -d 'Never retry an attempt whose stdout or stderr has a line matching REGEX (e.g. \'HTTP 4\\d\\d\'); may be repeated' -r
complete -c retry -n "__fish_retry_needs_command" -l reset-after -d 'Start the backoff and the attempt count over after a failed attempt that ran at least this long (e.g. 10m)' -r
complete -c retry -n "__fish_retry_needs_command" -l report -d 'Write a JSON summary of the run to FILE when it ends (e.g. retry-report.json)' -r -F
complete -c retry -n "__fish_retry_needs_command" -l seed -d 'Seed the jitter\'s random numbers with N (0 to 2^64-1) to make the waits reproducible, or with \'host\' to derive it from the host name and the command; default: random' -r
complete -c retry -n "__fish_retry_needs_command" -l splay -d 'Wait a random time below DURATION before the first attempt, drawn from the seed, so that a fleet\'s cron jobs spread out (e.g. 5m)' -r
complete -c retry -n "__fish_retry_needs_command" -l budget -d 'Share a retry budget with every other run on this machine naming the same budget (e.g. the API host they call)' -r
complete -c retry -n "__fish_retry_needs_command" -l budget-rate -d 'Let the budget hold at most N tokens, regaining N every DURATION; each retry takes one' -r
complete -c retry -n "__fish_retry_needs_command" -l budget-dir -d 'Keep budget state in DIR [default: $XDG_STATE_HOME/retry/budgets, or ~/.local/state/retry/budgets]' -r -F
complete -c retry -n "__fish_retry_needs_command" -l log-format -d 'Write the tool\'s own messages on stderr in this form (json: one object per line)' -r -f -a "text\t'One line of prose per event, prefixed `retry:`'
json\t'One JSON object per line, with an `event` key'"
complete -c retry -n "__fish_retry_needs_command" -l foreground -d 'Keep COMMAND in retry\'s own process group, like `timeout --foreground`: timeouts and signals then reach only COMMAND, not its children'
complete -c retry -n "__fish_retry_needs_command" -l replay-stdin -d 'Read stdin to its end before the first attempt, and give every attempt the same bytes'
complete -c retry -n "__fish_retry_needs_command" -l hold-output -d 'Hold each attempt\'s stdout: write it to stdout only for the attempt that succeeds, to stderr for the others'
complete -c retry -n "__fish_retry_needs_command" -l shell -d 'Join COMMAND and its ARGs with spaces and run the line with `sh -c`'
complete -c retry -n "__fish_retry_needs_command" -l plan -d 'Print the waits these options give, and exit without running COMMAND'
complete -c retry -n "__fish_retry_needs_command" -s q -l quiet -d 'Print none of the tool\'s own messages (errors in its own usage still print)'
complete -c retry -n "__fish_retry_needs_command" -s v -l verbose -d 'Also report each attempt\'s start and a success'
complete -c retry -n "__fish_retry_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c retry -n "__fish_retry_needs_command" -s V -l version -d 'Print version'
complete -c retry -n "__fish_retry_needs_command" -a "simulate" -d 'Rerun the AWS "Exponential Backoff And Jitter" contention experiment with this tool\'s own backoff'
complete -c retry -n "__fish_retry_using_subcommand simulate" -l clients -d 'Simulate these client counts: a list, or ranges with a step (e.g. 10,50,100 or 10-190/10)' -r
complete -c retry -n "__fish_retry_using_subcommand simulate" -l jitter -d 'Compare these jitter strategies (a comma-separated list); the no-backoff baseline is always shown' -r -f -a "none\t'No randomness: wait exactly the exponential ceiling'
full\t'Wait a uniform random time between 0 and the ceiling'
equal\t'Wait half the ceiling plus a uniform random time up to the other half'
decorrelated\t'Wait a uniform random time between base and three times the previous wait, capped'"
complete -c retry -n "__fish_retry_using_subcommand simulate" -l base -d 'The first wait, and the scale of the others (e.g. 5ms)' -r
complete -c retry -n "__fish_retry_using_subcommand simulate" -l cap -d 'The longest single wait' -r
complete -c retry -n "__fish_retry_using_subcommand simulate" -l multiplier -d 'Growth of the longest possible wait per retry; a number of at least 1' -r
complete -c retry -n "__fish_retry_using_subcommand simulate" -l trials -d 'Run N trials per strategy and client count; the table reports their mean and spread' -r
complete -c retry -n "__fish_retry_using_subcommand simulate" -l seed -d 'Seed the simulation (0 to 2^64-1) for reproducible results, whatever the number of threads; default: random' -r
complete -c retry -n "__fish_retry_using_subcommand simulate" -l csv -d 'Also write every statistic to FILE as CSV, one row per strategy and client count' -r -F
complete -c retry -n "__fish_retry_using_subcommand simulate" -l svg -d 'Also draw work and completion time against clients to FILE as SVG' -r -F
complete -c retry -n "__fish_retry_using_subcommand simulate" -s h -l help -d 'Print help (see more with \'--help\')'
