
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
            cand -n 'Make at most N attempts in total, the first included'
            cand --max-attempts 'Make at most N attempts in total, the first included'
            cand --base 'The first wait; later ones grow from it'
            cand --cap 'The longest single wait'
            cand --multiplier 'Growth of the longest wait per retry'
            cand --jitter 'How the waits are spread'
            cand --reset-after 'Start over after a failure this long'
            cand --seed 'Seed the jitter: a number, or ''host'''
            cand --retry-on 'Retry only these exit statuses'
            cand --stop-on 'Never retry these exit statuses'
            cand --preset 'Decide as a program''s manual says: curl, git, ssh, ... or auto'
            cand --success-on 'Exit statuses that count as success'
            cand --retry-on-output 'Retry only if a line of output matches'
            cand --stop-on-output 'Never retry if a line of output matches'
            cand --success-on-output 'Succeed only once a line of output matches'
            cand --output-stream 'Which streams the output conditions read'
            cand --retry-after-output 'Wait as long as a line of output asks'
            cand --max-requested-wait 'The longest requested wait honoured'
            cand --nested 'Inside another retry: once, retry or quiet'
            cand -t 'Time limit of one attempt (status 124)'
            cand --timeout 'Time limit of one attempt (status 124)'
            cand --max-time 'Time limit of the whole run'
            cand --timeout-signal 'The signal a time limit sends first'
            cand --kill-after 'SIGKILL this long after SIGTERM'
            cand --on-retry 'Run SHELL_LINE before each retry''s wait'
            cand --on-give-up 'Run SHELL_LINE once when the run gives up'
            cand --report 'Write a JSON summary of the run to FILE'
            cand --log-format 'text, or json: one object a line'
            cand --ci 'auto, none, github, gitlab, buildkite or azure'
            cand --report-dotenv 'Write the run''s outcome to FILE as NAME=value lines'
            cand --metrics 'Write the run''s metrics to FILE, for node_exporter'
            cand --metrics-job 'The job label of the --metrics gauges'
            cand --splay 'A random wait below DURATION before the first attempt'
            cand --budget 'Share a retry budget named NAME'
            cand --budget-rate 'At most N tokens, N more every DURATION'
            cand --budget-ratio 'Also earn R tokens per first attempt (e.g. 0.1)'
            cand --budget-window 'How long earned tokens last'
            cand --budget-store 'Where the budget lives: file, or redis://HOST'
            cand --budget-password-file 'Read the store''s password from FILE'
            cand --budget-store-fail 'When the budget cannot be used: open or closed'
            cand --budget-dir 'Where the file store keeps budgets'
            cand --plan 'Print the waits, and run nothing'
            cand --foreground 'Keep COMMAND in retry''s process group'
            cand --replay-stdin 'Give every attempt the same stdin'
            cand --shell 'Run COMMAND and ARGs as one `sh -c` line'
            cand --hold-output 'Write only the successful attempt''s stdout'
            cand -q 'Say nothing of the tool''s own'
            cand --quiet 'Say nothing of the tool''s own'
            cand -v 'Also say each attempt''s start and a success'
            cand --verbose 'Also say each attempt''s start and a success'
            cand --quiet-unless-failed 'Write nothing unless the run fails'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand simulate 'Rerun the experiments behind this tool''s defaults, with its own code.'
            cand budget 'budget'
        }
        &'retry;simulate'= {
            cand --clients 'Simulate these client counts: a list, or ranges with a step (e.g. 10,50,100 or 10-190/10)'
            cand --jitter 'Compare these jitter strategies (a comma-separated list); the no-backoff baseline is always shown'
            cand --base 'The first wait, and the scale of the others (e.g. 5ms)'
            cand --cap 'The longest single wait'
            cand --multiplier 'Growth of the longest possible wait per retry; a number of at least 1'
            cand --trials 'Run N trials per strategy and client count; the table reports their mean and spread'
            cand --seed 'Seed the simulation (0 to 2^64-1) for reproducible results, whatever the number of threads; default: random'
            cand --csv 'Also write every statistic to FILE as CSV, one row per point of the table'
            cand --svg 'Also draw the table''s means to FILE as SVG, one line per strategy or policy'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand contention 'Rerun the AWS "Exponential Backoff And Jitter" contention experiment (the default)'
            cand load 'Rerun Brooker''s retries-and-load experiment, with this tool''s budget among the policies'
            cand metastable 'Rerun the OSDI 2022 metastable-failure experiment, with this tool''s retries among the clients'
        }
        &'retry;simulate;contention'= {
            cand --clients 'Simulate these client counts: a list, or ranges with a step (e.g. 10,50,100 or 10-190/10)'
            cand --jitter 'Compare these jitter strategies (a comma-separated list); the no-backoff baseline is always shown'
            cand --base 'The first wait, and the scale of the others (e.g. 5ms)'
            cand --cap 'The longest single wait'
            cand --multiplier 'Growth of the longest possible wait per retry; a number of at least 1'
            cand --trials 'Run N trials per strategy and client count; the table reports their mean and spread'
            cand --seed 'Seed the simulation (0 to 2^64-1) for reproducible results, whatever the number of threads; default: random'
            cand --csv 'Also write every statistic to FILE as CSV, one row per point of the table'
            cand --svg 'Also draw the table''s means to FILE as SVG, one line per strategy or policy'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'retry;simulate;load'= {
            cand --failure-rates 'Simulate these failure rates: the server''s probability of failing a call, each from 0 to 1'
            cand --policies 'Compare these policies (a comma-separated list of none, retries, bucket and budget)'
            cand --retries 'The most retries per request, for retries and budget'
            cand --clients 'Simulate N clients'
            cand --rate 'Requests each client starts, on average, per unit of time (e.g. 10/s, 600/1m)'
            cand --base 'With --backoff, the first wait, and the scale of the others'
            cand --jitter 'With --backoff, the jitter: none, full, equal or decorrelated'
            cand --budget-rate 'The budget''s --budget-rate: at most N tokens, N more every DURATION'
            cand --budget-ratio 'The budget''s --budget-ratio: tokens earned per first try'
            cand --budget-window 'The budget''s --budget-window: how long earned tokens last'
            cand --duration 'How long clients start requests; those in flight then run to their end'
            cand --trials 'Run N trials per policy and failure rate; the table reports their mean and spread'
            cand --seed 'Seed the simulation (0 to 2^64-1) for reproducible results, whatever the number of threads; default: random'
            cand --csv 'Also write every statistic to FILE as CSV, one row per point of the table'
            cand --svg 'Also draw the table''s means to FILE as SVG, one line per strategy or policy'
            cand --serial 'Serial (closed-loop) clients: each keeps one request in flight, instead of starting them at Poisson moments'
            cand --backoff 'Wait between a request''s retries as this tool''s backoff says (--base, --jitter, a cap of 1m)'
            cand --shared 'One budget shared by every client, as a fleet shares one on Redis, instead of one each'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'retry;simulate;metastable'= {
            cand --policies 'Compare these policies (a comma-separated list of none, resend, defaults, ratio-per-host and ratio-shared)'
            cand --trigger-capacities 'Drop the server''s capacity to each of these fractions of itself (0 to 1; 0.225 and 0.2 are the artifact''s 0.45 and 0.40 of 2 CPUs)'
            cand --trigger-seconds 'Drop it for each of these durations, 60s into the run (e.g. 9s,10s)'
            cand --intervals 'Start a request every DURATION, for each in the list (the artifact''s: 75us, and 100us for less load)'
            cand --capacity 'The requests a second the server finishes at full capacity; the default puts the artifact''s four outcomes where it found them'
            cand --timeout 'Each attempt''s time limit (the artifact''s 3s)'
            cand --resends 'The resend policy''s most resends per request (the artifact''s 4)'
            cand --max-attempts 'This tool''s policies'' most attempts per request, as retry''s --max-attempts'
            cand --base 'This tool''s policies'' first wait, as retry''s --base'
            cand --cap 'This tool''s policies'' longest wait, as retry''s --cap'
            cand --jitter 'This tool''s policies'' jitter, as retry''s --jitter: none, full, equal or decorrelated'
            cand --budget-rate 'The budget''s --budget-rate: at most N tokens, N more every DURATION'
            cand --budget-ratio 'The budget''s --budget-ratio: tokens earned per first try'
            cand --budget-window 'The budget''s --budget-window: how long earned tokens last'
            cand --hosts 'Spread the requests over N client hosts, in turn; ratio-per-host gives each a budget'
            cand --observe 'Go on for DURATION after the trigger, to see whether the service recovers (at least 10s)'
            cand --chart-trigger 'Draw goodput and load over time, in the SVG, for this trigger at the first interval: CAPACITY:DURATION'
            cand --seed 'Seed the simulation (0 to 2^64-1) for reproducible results, whatever the number of threads; default: random'
            cand --csv 'Also write every statistic to FILE as CSV, one row per point of the table'
            cand --svg 'Also draw the table''s means to FILE as SVG, one line per strategy or policy'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'retry;budget'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand show 'Print a budget''s state now: its tokens, its counters, and when it will be full'
        }
        &'retry;budget;show'= {
            cand --budget-store 'Where the budget lives: file, or a redis:// URL, as runs give it [default: $RETRY_BUDGET_STORE, or file]'
            cand --budget-password-file 'Read the store''s password from the first line of FILE, as runs do'
            cand --budget-dir 'Where the file store keeps budgets [default: $XDG_STATE_HOME/retry/budgets, or ~/.local/state/retry/budgets]'
            cand --log-format 'Print the state as text, or as one JSON object (json)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
    ]
    $completions[$command]
}
