
use builtin;
use str;

set edit:completion:arg-completer[retry] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'retry'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'retry'= {
            cand -n 'Make at most N attempts in total, the first included; a whole number or ''unlimited'''
            cand --max-attempts 'Make at most N attempts in total, the first included; a whole number or ''unlimited'''
            cand --base 'Wait this long after the first failure; the scale of every later wait (e.g. 250ms, 2s; 0s: never wait)'
            cand --cap 'Never wait longer than this between two attempts (e.g. 30s, 5m)'
            cand --multiplier 'Multiply the longest possible wait by FACTOR after each retry; a number of at least 1 (e.g. 1.5)'
            cand --jitter 'Spread the waits with this strategy, so that clients failing together retry apart'
            cand --retry-on 'Retry only when the exit status is in CODES (e.g. 1,75-78); default: any failure'
            cand --stop-on 'Never retry when the exit status is in CODES (e.g. 2,64-78); default: none'
            cand --success-on 'Count these exit statuses as success (e.g. 0,3)'
            cand -t 'End an attempt that runs longer than this (SIGTERM, then SIGKILL after --kill-after); it counts as status 124 (e.g. 30s)'
            cand --timeout 'End an attempt that runs longer than this (SIGTERM, then SIGKILL after --kill-after); it counts as status 124 (e.g. 30s)'
            cand --max-time 'Limit the whole run, attempts and waits together, counted from the start (e.g. 10m); default: none'
            cand --kill-after 'Send SIGKILL this long after SIGTERM to an attempt still running (after a timeout, the deadline or a passed-on signal)'
            cand --retry-on-output 'Retry a failure only if its stdout or stderr has a line matching REGEX (e.g. ''\b503\b''); may be repeated: any match counts'
            cand --stop-on-output 'Never retry an attempt whose stdout or stderr has a line matching REGEX (e.g. ''HTTP 4\d\d''); may be repeated'
            cand --reset-after 'Start the backoff and the attempt count over after a failed attempt that ran at least this long (e.g. 10m)'
            cand --report 'Write a JSON summary of the run to FILE when it ends (e.g. retry-report.json)'
            cand --seed 'Seed the jitter''s random numbers with N (0 to 2^64-1) to make the waits reproducible, or with ''host'' to derive it from the host name and the command; default: random'
            cand --splay 'Wait a random time below DURATION before the first attempt, drawn from the seed, so that a fleet''s cron jobs spread out (e.g. 5m)'
            cand --budget 'Share a retry budget with every other run on this machine naming the same budget (e.g. the API host they call)'
            cand --budget-rate 'Let the budget hold at most N tokens, regaining N every DURATION; each retry takes one'
            cand --budget-dir 'Keep budget state in DIR [default: $XDG_STATE_HOME/retry/budgets, or ~/.local/state/retry/budgets]'
            cand --log-format 'Write the tool''s own messages on stderr in this form (json: one object per line)'
            cand --foreground 'Keep COMMAND in retry''s own process group, like `timeout --foreground`: timeouts and signals then reach only COMMAND, not its children'
            cand --replay-stdin 'Read stdin to its end before the first attempt, and give every attempt the same bytes'
            cand --hold-output 'Hold each attempt''s stdout: write it to stdout only for the attempt that succeeds, to stderr for the others'
            cand --shell 'Join COMMAND and its ARGs with spaces and run the line with `sh -c`'
            cand --plan 'Print the waits these options give, and exit without running COMMAND'
            cand -q 'Print none of the tool''s own messages (errors in its own usage still print)'
            cand --quiet 'Print none of the tool''s own messages (errors in its own usage still print)'
            cand -v 'Also report each attempt''s start and a success'
            cand --verbose 'Also report each attempt''s start and a success'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand simulate 'Rerun the AWS "Exponential Backoff And Jitter" contention experiment with this tool''s own backoff'
        }
        &'retry;simulate'= {
            cand --clients 'Simulate these client counts: a list, or ranges with a step (e.g. 10,50,100 or 10-190/10)'
            cand --jitter 'Compare these jitter strategies (a comma-separated list); the no-backoff baseline is always shown'
            cand --base 'The first wait, and the scale of the others (e.g. 5ms)'
            cand --cap 'The longest single wait'
            cand --multiplier 'Growth of the longest possible wait per retry; a number of at least 1'
            cand --trials 'Run N trials per strategy and client count; the table reports their mean and spread'
            cand --seed 'Seed the simulation (0 to 2^64-1) for reproducible results, whatever the number of threads; default: random'
            cand --csv 'Also write every statistic to FILE as CSV, one row per strategy and client count'
            cand --svg 'Also draw work and completion time against clients to FILE as SVG'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
    ]
    $completions[$command]
}
