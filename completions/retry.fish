# fish completion for retry, written from its clap definition by `cargo xtask generate`; do not edit.
# After retry's own options, COMMAND completes as a command, and its arguments with its
# own completion (__fish_complete_subcommand), as for sudo and env.

# The tokens from COMMAND on, when the token being completed is COMMAND or one of its
# arguments; nothing (and false) while it is one of retry's own.
function __retry_command_tokens
    set -l tokens (commandline -opc)
    set -l current (commandline -ct)
    set -l skip_value 0
    for i in (seq 2 (count $tokens))
        set -l token $tokens[$i]
        if test $skip_value = 1
            set skip_value 0
            continue
        end
        switch $token
            case --
                string join \n -- $tokens[(math $i + 1)..-1] $current
                return 0
            case '-n' '--max-attempts' '--base' '--cap' '--multiplier' '--jitter' '--reset-after' '--seed' '--retry-on' '--stop-on' '--preset' '--success-on' '--retry-on-output' '--stop-on-output' '--success-on-output' '--output-stream' '--retry-after-output' '--max-requested-wait' '--nested' '-t' '--timeout' '--max-time' '--timeout-signal' '--kill-after' '--on-retry' '--on-give-up' '--report' '--log-format' '--ci' '--report-dotenv' '--metrics' '--metrics-job' '--splay' '--budget' '--budget-rate' '--budget-ratio' '--budget-window' '--budget-store' '--budget-password-file' '--budget-store-fail' '--budget-dir'
                set skip_value 1
            case '-*'
            case '*'
                string join \n -- $tokens[$i..-1] $current
                return 0
        end
    end
    if test $skip_value = 0; and not string match -q -- '-*' $current
        echo $current
        return 0
    end
    return 1
end

# Whether the line so far is `retry WORDS...`, with at least as many tokens.
function __retry_words
    set -l tokens (commandline -opc)
    for i in (seq (count $argv))
        set -l at (math $i + 1)
        test "$tokens[$at]" = $argv[$i]; or return 1
    end
end

# Whether the token being completed is the one after `retry WORDS...`.
function __retry_after
    __retry_words $argv; and test (count (commandline -opc)) = (math (count $argv) + 1)
end

function __retry_subcommand
    __retry_words simulate; or __retry_words budget
end

function __retry_simulating_contention
    __retry_words simulate; and not __retry_words simulate load
    and not __retry_words simulate metastable
end

function __retry_own
    not __retry_subcommand; and not __retry_command_tokens >/dev/null
end

complete -c retry -f
complete -c retry -n 'not __retry_subcommand; and __retry_command_tokens >/dev/null' -a '(__fish_complete_subcommand --commandline (__retry_command_tokens))'
complete -c retry -n 'not __retry_subcommand; and test (count (commandline -opc)) = 1' -a simulate -d 'Rerun the experiments behind this tool\'s defaults, with its own code'
complete -c retry -n 'not __retry_subcommand; and test (count (commandline -opc)) = 1' -a budget -d 'Print a budget\'s state now: its tokens, its counters, and when it will be full'
complete -c retry -n '__retry_after simulate' -a contention -d 'Rerun the AWS "Exponential Backoff And Jitter" contention experiment (the default)'
complete -c retry -n '__retry_after simulate' -a load -d 'Rerun Brooker\'s retries-and-load experiment, with this tool\'s budget among the policies'
complete -c retry -n '__retry_after simulate' -a metastable -d 'Rerun the OSDI 2022 metastable-failure experiment, with this tool\'s retries among the clients'
complete -c retry -n '__retry_after budget' -a show -d 'Print a budget\'s state now: its tokens, its counters, and when it will be full'
complete -c retry -n __retry_own -s n -l max-attempts -x -d 'Make at most N attempts in total, the first included'
complete -c retry -n __retry_own -l base -x -d 'The first wait; later ones grow from it'
complete -c retry -n __retry_own -l cap -x -d 'The longest single wait'
complete -c retry -n __retry_own -l multiplier -x -d 'Growth of the longest wait per retry'
complete -c retry -n __retry_own -l jitter -x -a '(printf "%s\t%s\n" "none" "No randomness: wait exactly the exponential ceiling" "full" "Wait a uniform random time between 0 and the ceiling" "equal" "Wait half the ceiling plus a uniform random time up to the other half" "decorrelated" "Wait a uniform random time between base and three times the previous wait, capped")' -d 'How the waits are spread'
complete -c retry -n __retry_own -l reset-after -x -d 'Start over after a failure this long'
complete -c retry -n __retry_own -l seed -x -d 'Seed the jitter: a number, or \'host\''
complete -c retry -n __retry_own -l plan -d 'Print the waits, and run nothing'
complete -c retry -n __retry_own -l retry-on -x -d 'Retry only these exit statuses'
complete -c retry -n __retry_own -l stop-on -x -d 'Never retry these exit statuses'
complete -c retry -n __retry_own -l preset -x -a '(printf "%s\t%s\n" "auto" "The preset of the command\'s program, if it has one" "curl" "curl(1) EXIT CODES and --retry; libcurl-errors(3)" "wget" "wget(1) EXIT STATUS" "git" "git(1) and git-clone(1), git-fetch(1): status 128 and the messages of its transports (http, git://, ssh)" "rsync" "rsync(1) EXIT VALUES, rsyncd.conf(5) max connections" "ssh" "ssh(1) EXIT STATUS (255 for its own errors, else the remote command\'s) and its messages" "psql" "psql(1) EXIT STATUS, and PostgreSQL\'s connection messages" "pg_isready" "pg_isready(1) EXIT STATUS" "apt-get" "apt-get(8) DIAGNOSTICS (100 for an error) and apt\'s messages; apt-get update\'s status 0 after a failed fetch" "pip" "pip\'s messages (pip ends an error with 1, and with 2 when an exception escapes it): pip install, download and wheel, their index and network errors" "npm" "npm\'s error codes (npm ends every error with 1): E404, ETARGET, E401, a name that does not exist (ENOTFOUND), a certificate it cannot verify, and the other codes of npm-registry-fetch")' -d 'Decide as a program\'s manual says: curl, git, ssh, ... or auto'
complete -c retry -n __retry_own -l success-on -x -d 'Exit statuses that count as success'
complete -c retry -n __retry_own -l retry-on-output -x -d 'Retry only if a line of output matches'
complete -c retry -n __retry_own -l stop-on-output -x -d 'Never retry if a line of output matches'
complete -c retry -n __retry_own -l success-on-output -x -d 'Succeed only once a line of output matches'
complete -c retry -n __retry_own -l output-stream -x -a '(printf "%s\t%s\n" "both" "Stdout and stderr" "stdout" "Stdout only" "stderr" "Stderr only")' -d 'Which streams the output conditions read'
complete -c retry -n __retry_own -l retry-after-output -x -d 'Wait as long as a line of output asks'
complete -c retry -n __retry_own -l max-requested-wait -x -d 'The longest requested wait honoured'
complete -c retry -n __retry_own -l nested -x -a '(printf "%s\t%s\n" "once" "One attempt: the outer layer does the retrying" "retry" "Retry as usual, warning of the attempts the layers multiply to" "quiet" "Retry as usual, without the warning")' -d 'Inside another retry: once, retry or quiet'
complete -c retry -n __retry_own -s t -l timeout -x -d 'Time limit of one attempt (status 124)'
complete -c retry -n __retry_own -l max-time -x -d 'Time limit of the whole run'
complete -c retry -n __retry_own -l timeout-signal -x -d 'The signal a time limit sends first'
complete -c retry -n __retry_own -l kill-after -x -d 'SIGKILL this long after SIGTERM'
complete -c retry -n __retry_own -l foreground -d 'Keep COMMAND in retry\'s process group'
complete -c retry -n __retry_own -l replay-stdin -d 'Give every attempt the same stdin'
complete -c retry -n __retry_own -l shell -d 'Run COMMAND and ARGs as one `sh -c` line'
complete -c retry -n __retry_own -l on-retry -x -d 'Run SHELL_LINE before each retry\'s wait'
complete -c retry -n __retry_own -l on-give-up -x -d 'Run SHELL_LINE once when the run gives up'
complete -c retry -n __retry_own -l hold-output -d 'Write only the successful attempt\'s stdout'
complete -c retry -n __retry_own -l report -r -F -d 'Write a JSON summary of the run to FILE'
complete -c retry -n __retry_own -l log-format -x -a '(printf "%s\t%s\n" "text" "One line of prose per event, prefixed `retry:`" "json" "One JSON object per line, with an `event` key")' -d 'text, or json: one object a line'
complete -c retry -n __retry_own -s q -l quiet -d 'Say nothing of the tool\'s own'
complete -c retry -n __retry_own -s v -l verbose -d 'Also say each attempt\'s start and a success'
complete -c retry -n __retry_own -l ci -x -a '(printf "%s\t%s\n" "auto" "The system whose variable is set (GITHUB_ACTIONS, GITLAB_CI, ...)" "none" "None: speak as to a terminal" "github" "GitHub Actions: `::group::`, `::warning::`, `\$GITHUB_OUTPUT`, `\$GITHUB_STEP_SUMMARY`" "gitlab" "GitLab CI/CD: `section_start` and `section_end` lines" "buildkite" "Buildkite: `---` headers, `^^^ +++` to open a failing one" "azure" "Azure Pipelines: `##[group]`, `##vso[task.logissue]`, `##vso[task.setvariable]`")' -d 'auto, none, github, gitlab, buildkite or azure'
complete -c retry -n __retry_own -l report-dotenv -r -F -d 'Write the run\'s outcome to FILE as NAME=value lines'
complete -c retry -n __retry_own -l quiet-unless-failed -d 'Write nothing unless the run fails'
complete -c retry -n __retry_own -l metrics -r -F -d 'Write the run\'s metrics to FILE, for node_exporter'
complete -c retry -n __retry_own -l metrics-job -x -d 'The job label of the --metrics gauges'
complete -c retry -n __retry_own -l splay -x -d 'A random wait below DURATION before the first attempt'
complete -c retry -n __retry_own -l budget -x -d 'Share a retry budget named NAME'
complete -c retry -n __retry_own -l budget-rate -x -d 'At most N tokens, N more every DURATION'
complete -c retry -n __retry_own -l budget-ratio -x -d 'Also earn R tokens per first attempt (e.g. 0.1)'
complete -c retry -n __retry_own -l budget-window -x -d 'How long earned tokens last'
complete -c retry -n __retry_own -l budget-store -x -d 'Where the budget lives: file, or redis://HOST'
complete -c retry -n __retry_own -l budget-password-file -r -F -d 'Read the store\'s password from FILE'
complete -c retry -n __retry_own -l budget-store-fail -x -a '(printf "%s\t%s\n" "open" "Warn once, and use the file store on this machine for the rest of the run" "closed" "Count it as no token: the run gives up with reason `budget`")' -d 'When the budget cannot be used: open or closed'
complete -c retry -n __retry_own -l budget-dir -r -F -d 'Where the file store keeps budgets'
complete -c retry -n __retry_own -s h -l help -d 'Print help (see more with \'--help\')'
complete -c retry -n __retry_own -s V -l version -d 'Print version'
complete -c retry -n __retry_simulating_contention -l clients -x -d 'Simulate these client counts: a list, or ranges with a step (e.g. 10,50,100 or 10-190/10)'
complete -c retry -n __retry_simulating_contention -l jitter -x -a '(printf "%s\t%s\n" "none" "No randomness: wait exactly the exponential ceiling" "full" "Wait a uniform random time between 0 and the ceiling" "equal" "Wait half the ceiling plus a uniform random time up to the other half" "decorrelated" "Wait a uniform random time between base and three times the previous wait, capped")' -d 'Compare these jitter strategies (a comma-separated list); the no-backoff baseline is always shown'
complete -c retry -n __retry_simulating_contention -l base -x -d 'The first wait, and the scale of the others (e.g. 5ms)'
complete -c retry -n __retry_simulating_contention -l cap -x -d 'The longest single wait'
complete -c retry -n __retry_simulating_contention -l multiplier -x -d 'Growth of the longest possible wait per retry; a number of at least 1'
complete -c retry -n __retry_simulating_contention -l trials -x -d 'Run N trials per strategy and client count; the table reports their mean and spread'
complete -c retry -n __retry_simulating_contention -l seed -x -d 'Seed the simulation (0 to 2^64-1) for reproducible results, whatever the number of threads; default: random'
complete -c retry -n __retry_simulating_contention -l csv -r -F -d 'Also write every statistic to FILE as CSV, one row per point of the table'
complete -c retry -n __retry_simulating_contention -l svg -r -F -d 'Also draw the table\'s means to FILE as SVG, one line per strategy or policy'
complete -c retry -n __retry_simulating_contention -s h -l help -d 'Print help (see more with \'--help\')'
complete -c retry -n '__retry_words simulate load' -l failure-rates -x -d 'Simulate these failure rates: the server\'s probability of failing a call, each from 0 to 1'
complete -c retry -n '__retry_words simulate load' -l policies -x -a '(printf "%s\t%s\n" "none" "Never" "retries" "Up to N retries per request" "bucket" "Brooker\'s adaptive token bucket" "budget" "This tool\'s budget, up to N retries per request")' -d 'Compare these policies (a comma-separated list of none, retries, bucket and budget)'
complete -c retry -n '__retry_words simulate load' -l retries -x -d 'The most retries per request, for retries and budget'
complete -c retry -n '__retry_words simulate load' -l clients -x -d 'Simulate N clients'
complete -c retry -n '__retry_words simulate load' -l rate -x -d 'Requests each client starts, on average, per unit of time (e.g. 10/s, 600/1m)'
complete -c retry -n '__retry_words simulate load' -l serial -d 'Serial (closed-loop) clients: each keeps one request in flight, instead of starting them at Poisson moments'
complete -c retry -n '__retry_words simulate load' -l backoff -d 'Wait between a request\'s retries as this tool\'s backoff says (--base, --jitter, a cap of 1m)'
complete -c retry -n '__retry_words simulate load' -l base -x -d 'With --backoff, the first wait, and the scale of the others'
complete -c retry -n '__retry_words simulate load' -l jitter -x -a '(printf "%s\t%s\n" "none" "No randomness: wait exactly the exponential ceiling" "full" "Wait a uniform random time between 0 and the ceiling" "equal" "Wait half the ceiling plus a uniform random time up to the other half" "decorrelated" "Wait a uniform random time between base and three times the previous wait, capped")' -d 'With --backoff, the jitter: none, full, equal or decorrelated'
complete -c retry -n '__retry_words simulate load' -l budget-rate -x -d 'The budget\'s --budget-rate: at most N tokens, N more every DURATION'
complete -c retry -n '__retry_words simulate load' -l budget-ratio -x -d 'The budget\'s --budget-ratio: tokens earned per first try'
complete -c retry -n '__retry_words simulate load' -l budget-window -x -d 'The budget\'s --budget-window: how long earned tokens last'
complete -c retry -n '__retry_words simulate load' -l shared -d 'One budget shared by every client, as a fleet shares one on Redis, instead of one each'
complete -c retry -n '__retry_words simulate load' -l duration -x -d 'How long clients start requests; those in flight then run to their end'
complete -c retry -n '__retry_words simulate load' -l trials -x -d 'Run N trials per policy and failure rate; the table reports their mean and spread'
complete -c retry -n '__retry_words simulate load' -l seed -x -d 'Seed the simulation (0 to 2^64-1) for reproducible results, whatever the number of threads; default: random'
complete -c retry -n '__retry_words simulate load' -l csv -r -F -d 'Also write every statistic to FILE as CSV, one row per point of the table'
complete -c retry -n '__retry_words simulate load' -l svg -r -F -d 'Also draw the table\'s means to FILE as SVG, one line per strategy or policy'
complete -c retry -n '__retry_words simulate load' -s h -l help -d 'Print help (see more with \'--help\')'
complete -c retry -n '__retry_words simulate metastable' -l policies -x -a '(printf "%s\t%s\n" "none" "Never" "resend" "At once, up to `--resends` times: the artifact\'s client" "defaults" "This tool\'s waits and attempt limit" "ratio-per-host" "This tool\'s, with a ratio budget per client host" "ratio-shared" "This tool\'s, with one ratio budget for the fleet")' -d 'Compare these policies (a comma-separated list of none, resend, defaults, ratio-per-host and ratio-shared)'
complete -c retry -n '__retry_words simulate metastable' -l trigger-capacities -x -d 'Drop the server\'s capacity to each of these fractions of itself (0 to 1; 0.225 and 0.2 are the artifact\'s 0.45 and 0.40 of 2 CPUs)'
complete -c retry -n '__retry_words simulate metastable' -l trigger-seconds -x -d 'Drop it for each of these durations, 60s into the run (e.g. 9s,10s)'
complete -c retry -n '__retry_words simulate metastable' -l intervals -x -d 'Start a request every DURATION, for each in the list (the artifact\'s: 75us, and 100us for less load)'
complete -c retry -n '__retry_words simulate metastable' -l capacity -x -d 'The requests a second the server finishes at full capacity; the default puts the artifact\'s four outcomes where it found them'
complete -c retry -n '__retry_words simulate metastable' -l timeout -x -d 'Each attempt\'s time limit (the artifact\'s 3s)'
complete -c retry -n '__retry_words simulate metastable' -l resends -x -d 'The resend policy\'s most resends per request (the artifact\'s 4)'
complete -c retry -n '__retry_words simulate metastable' -l max-attempts -x -d 'This tool\'s policies\' most attempts per request, as retry\'s --max-attempts'
complete -c retry -n '__retry_words simulate metastable' -l base -x -d 'This tool\'s policies\' first wait, as retry\'s --base'
complete -c retry -n '__retry_words simulate metastable' -l cap -x -d 'This tool\'s policies\' longest wait, as retry\'s --cap'
complete -c retry -n '__retry_words simulate metastable' -l jitter -x -a '(printf "%s\t%s\n" "none" "No randomness: wait exactly the exponential ceiling" "full" "Wait a uniform random time between 0 and the ceiling" "equal" "Wait half the ceiling plus a uniform random time up to the other half" "decorrelated" "Wait a uniform random time between base and three times the previous wait, capped")' -d 'This tool\'s policies\' jitter, as retry\'s --jitter: none, full, equal or decorrelated'
complete -c retry -n '__retry_words simulate metastable' -l budget-rate -x -d 'The budget\'s --budget-rate: at most N tokens, N more every DURATION'
complete -c retry -n '__retry_words simulate metastable' -l budget-ratio -x -d 'The budget\'s --budget-ratio: tokens earned per first try'
complete -c retry -n '__retry_words simulate metastable' -l budget-window -x -d 'The budget\'s --budget-window: how long earned tokens last'
complete -c retry -n '__retry_words simulate metastable' -l hosts -x -d 'Spread the requests over N client hosts, in turn; ratio-per-host gives each a budget'
complete -c retry -n '__retry_words simulate metastable' -l observe -x -d 'Go on for DURATION after the trigger, to see whether the service recovers (at least 10s)'
complete -c retry -n '__retry_words simulate metastable' -l chart-trigger -x -d 'Draw goodput and load over time, in the SVG, for this trigger at the first interval: CAPACITY:DURATION'
complete -c retry -n '__retry_words simulate metastable' -l seed -x -d 'Seed the simulation (0 to 2^64-1) for reproducible results, whatever the number of threads; default: random'
complete -c retry -n '__retry_words simulate metastable' -l csv -r -F -d 'Also write every statistic to FILE as CSV, one row per point of the table'
complete -c retry -n '__retry_words simulate metastable' -l svg -r -F -d 'Also draw the table\'s means to FILE as SVG, one line per strategy or policy'
complete -c retry -n '__retry_words simulate metastable' -s h -l help -d 'Print help (see more with \'--help\')'
complete -c retry -n '__retry_words budget show' -l budget-store -x -d 'Where the budget lives: file, or a redis:// URL, as runs give it [default: $RETRY_BUDGET_STORE, or file]'
complete -c retry -n '__retry_words budget show' -l budget-password-file -r -F -d 'Read the store\'s password from the first line of FILE, as runs do'
complete -c retry -n '__retry_words budget show' -l budget-dir -r -F -d 'Where the file store keeps budgets [default: $XDG_STATE_HOME/retry/budgets, or ~/.local/state/retry/budgets]'
complete -c retry -n '__retry_words budget show' -l log-format -x -a '(printf "%s\t%s\n" "text" "One line of prose per event, prefixed `retry:`" "json" "One JSON object per line, with an `event` key")' -d 'Print the state as text, or as one JSON object (json)'
complete -c retry -n '__retry_words budget show' -s h -l help -d 'Print help (see more with \'--help\')'
