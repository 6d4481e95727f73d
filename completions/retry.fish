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
            case '-n' '--max-attempts' '--base' '--cap' '--jitter' '--multiplier' '--reset-after' '--seed' '--retry-on' '--stop-on' '--success-on' '--flaky-exit' '--preset' '--retry-after-output' '-t' '--timeout' '--max-time' '--timeout-signal' '--kill-after' '--hold' '--log-format' '--ci' '--report' '--job' '--on-retry' '--on-give-up' '--splay' '--budget' '--budget-store'
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
    __retry_words budget; or __retry_words job
end

function __retry_own
    not __retry_subcommand; and not __retry_command_tokens >/dev/null
end

complete -c retry -f
complete -c retry -n 'not __retry_subcommand; and __retry_command_tokens >/dev/null' -a '(__fish_complete_subcommand --commandline (__retry_command_tokens))'
complete -c retry -n 'not __retry_subcommand; and test (count (commandline -opc)) = 1' -a budget -d 'Print a budget\'s state now: its terms, its tokens, its counters, and when it will be full'
complete -c retry -n 'not __retry_subcommand; and test (count (commandline -opc)) = 1' -a job -d 'Print a job\'s terms: whether its runs may overlap, and the run in progress'
complete -c retry -n '__retry_after budget' -a show -d 'Print a budget\'s state now: its terms, its tokens, its counters, and when it will be full'
complete -c retry -n '__retry_after budget' -a set -d 'Set a budget\'s terms, which every run that shares the budget uses'
complete -c retry -n '__retry_after job' -a show -d 'Print a job\'s terms: whether its runs may overlap, and the run in progress'
complete -c retry -n '__retry_after job' -a set -d 'Set a job\'s terms, which every run of the job obeys'
complete -c retry -n '__retry_after job' -a history -d 'Print a job\'s history of runs: clean, flaky and failed, and its pass rate'
complete -c retry -n __retry_own -s n -l max-attempts -x -d 'Most attempts, the first included'
complete -c retry -n __retry_own -l base -x -d 'The first wait; later waits grow'
complete -c retry -n __retry_own -l cap -x -d 'The longest backoff wait'
complete -c retry -n __retry_own -l jitter -x -a '(printf "%s\t%s\n" "none" "No randomness: wait exactly the exponential ceiling" "full" "Wait a uniform random time between 0 and the ceiling" "equal" "Wait half the ceiling plus a uniform random time up to the other half" "decorrelated" "Wait a uniform random time between base and three times the previous wait, capped")' -d 'none, full, equal or decorrelated'
complete -c retry -n __retry_own -l multiplier -x -d 'Growth of the longest wait per retry'
complete -c retry -n __retry_own -l reset-after -x -d 'Start over after a failure this long'
complete -c retry -n __retry_own -l seed -x -d 'Seed the jitter: a number, or \'host\''
complete -c retry -n __retry_own -l retry-on -x -d 'Retry what RULE names; may be repeated'
complete -c retry -n __retry_own -l stop-on -x -d 'Never retry what RULE names; may be repeated'
complete -c retry -n __retry_own -l success-on -x -d 'Count what RULE names as success [default: 0]'
complete -c retry -n __retry_own -l flaky-exit -x -d 'Exit STATUS after a success that needed retries'
complete -c retry -n __retry_own -l preset -x -a '(printf "%s\t%s\n" "auto" "The preset of the command\'s program, if it has one" "curl" "curl(1) EXIT CODES and --retry; libcurl-errors(3)" "wget" "wget(1) EXIT STATUS" "git" "git(1) and git-clone(1), git-fetch(1): status 128 and the messages of its transports (http, git://, ssh)" "rsync" "rsync(1) EXIT VALUES, rsyncd.conf(5) max connections" "ssh" "ssh(1) EXIT STATUS (255 for its own errors, else the remote command\'s) and its messages" "psql" "psql(1) EXIT STATUS, and PostgreSQL\'s connection messages" "pg_isready" "pg_isready(1) EXIT STATUS" "apt-get" "apt-get(8) DIAGNOSTICS (100 for an error) and apt\'s messages; apt-get update\'s status 0 after a failed fetch" "pip" "pip\'s messages (pip ends an error with 1, and with 2 when an exception escapes it): pip install, download and wheel, their index and network errors" "npm" "npm\'s error codes (npm ends every error with 1): E404, ETARGET, E401, a name that does not exist (ENOTFOUND), a certificate it cannot verify, and the other codes of npm-registry-fetch")' -d 'As a program\'s manual says: curl, git, ... or auto'
complete -c retry -n __retry_own -l retry-after-output -x -d 'Wait as long as a line of output asks'
complete -c retry -n __retry_own -s t -l timeout -x -d 'Time limit of one attempt (status 124)'
complete -c retry -n __retry_own -l max-time -x -d 'Time limit of the whole run'
complete -c retry -n __retry_own -l timeout-signal -x -a '(printf "%s\t%s\n" "TERM" "ask it to end (the default)" "INT" "as Ctrl-C does" "HUP" "as a closed terminal does" "QUIT" "end with a core dump" "USR1" "the program\'s own meaning" "USR2" "the program\'s own meaning" "KILL" "end it at once, with no say")' -d 'The signal a time limit sends first'
complete -c retry -n __retry_own -l kill-after -x -d 'SIGKILL this long after SIGTERM'
complete -c retry -n __retry_own -l foreground -d 'Keep COMMAND in retry\'s process group'
complete -c retry -n __retry_own -l replay-stdin -d 'Give every attempt the same stdin'
complete -c retry -n __retry_own -l shell -d 'Run COMMAND and ARGs as one `sh -c` line'
complete -c retry -n __retry_own -l plan -d 'Print the waits and the rules; run nothing'
complete -c retry -n __retry_own -s q -l quiet -d 'Say nothing of the tool\'s own'
complete -c retry -n __retry_own -s v -l verbose -d 'Also say each attempt\'s start and a success'
complete -c retry -n __retry_own -l hold -x -a '(printf "%s\t%s\n" "stdout" "Write only the successful attempt\'s stdout to stdout" "all" "Write nothing unless the run fails, then the whole story")' -d 'Hold output until its attempt is judged: stdout or all'
complete -c retry -n __retry_own -l log-format -x -a '(printf "%s\t%s\n" "text" "One line of prose per event, prefixed `retry:`" "json" "One JSON object per line, with an `event` key")' -d 'text, or json: one object a line'
complete -c retry -n __retry_own -l ci -x -a '(printf "%s\t%s\n" "auto" "The system whose variable is set (GITHUB_ACTIONS, GITLAB_CI, ...)" "none" "None: speak as to a terminal" "github" "GitHub Actions: `::group::`, `::warning::`, `\$GITHUB_OUTPUT`, `\$GITHUB_STEP_SUMMARY`" "gitlab" "GitLab CI/CD: `section_start` and `section_end` lines" "buildkite" "Buildkite: `---` headers, `^^^ +++` to open a failing one" "azure" "Azure Pipelines: `##[group]`, `##vso[task.logissue]`, `##vso[task.setvariable]`")' -d 'auto, none, github, gitlab, buildkite or azure'
complete -c retry -n __retry_own -l report -r -F -d 'Write a report to FILE when the run ends; may be repeated'
complete -c retry -n __retry_own -l job -x -d 'The job\'s name, for its history, metrics and CI groups'
complete -c retry -n __retry_own -l on-retry -x -d 'Run SHELL_LINE before each retry\'s wait'
complete -c retry -n __retry_own -l on-give-up -x -d 'Run SHELL_LINE once when the run gives up'
complete -c retry -n __retry_own -l splay -x -d 'A random wait below DURATION before the first attempt'
complete -c retry -n __retry_own -l budget -x -d 'Share the retry budget NAME, or \'off\''
complete -c retry -n __retry_own -l budget-store -x -d 'Where budgets live: file, file:DIR, or redis://HOST'
complete -c retry -n __retry_own -s h -l help -d 'Print help (see more with \'--help\')'
complete -c retry -n __retry_own -s V -l version -d 'Print version'
complete -c retry -n '__retry_words budget show' -l budget-store -x -d 'Where budgets live: file, file:DIR, or redis://HOST'
complete -c retry -n '__retry_words budget show' -l log-format -x -a '(printf "%s\t%s\n" "text" "One line of prose per event, prefixed `retry:`" "json" "One JSON object per line, with an `event` key")' -d 'Print it as text, or as one JSON object (json)'
complete -c retry -n '__retry_words budget show' -s h -l help -d 'Print help (see more with \'--help\')'
complete -c retry -n '__retry_words budget set' -l rate -x -d 'At most N tokens, regaining N every DURATION; each retry takes one (e.g. 10/1m); needed the first time, kept when not given'
complete -c retry -n '__retry_words budget set' -l ratio -x -d 'Also earn R tokens (more than 0, at most 1, e.g. 0.1) for every first attempt of any run sharing the budget, spent before the rate\'s, at once or not at all (kept when not given; none the first time)'
complete -c retry -n '__retry_words budget set' -l window -x -d 'Let earned tokens fade exponentially with this time constant (e.g. 30s, 5m; kept when not given; 1m the first time)'
complete -c retry -n '__retry_words budget set' -l breaker -x -d 'A breaker: once N runs sharing the budget gave up within DURATION, runs make no attempt (they exit 75) until a cool-down is over, when one run\'s attempt decides (e.g. 5/1m; kept when not given; none the first time)'
complete -c retry -n '__retry_words budget set' -l breaker-share -x -d 'The breaker opens only when the runs that gave up are at least this share of the runs that ended in its window (more than 0, at most 1; kept when not given; 0.5 the first time)'
complete -c retry -n '__retry_words budget set' -l breaker-hosts -x -d 'On a shared store, the breaker opens only when the runs that gave up came from at least this many hosts (1 to 16; kept when not given; 2 the first time), so that one broken host cannot stop a fleet'
complete -c retry -n '__retry_words budget set' -l cool-down -x -d 'How long the breaker stays open the first time; each re-opening doubles it, up to 32 times (e.g. 30s, 5m; kept when not given; 30s the first time)'
complete -c retry -n '__retry_words budget set' -l clear -x -a '(printf "%s\t%s\n" "ratio" "No tokens earned by first attempts" "breaker" "No breaker")' -d 'Remove a term: ratio (no tokens earned) or breaker; refused beside the --ratio or --breaker that would set it. May be repeated'
complete -c retry -n '__retry_words budget set' -l budget-store -x -d 'Where budgets live: file, file:DIR, or redis://HOST'
complete -c retry -n '__retry_words budget set' -s h -l help -d 'Print help (see more with \'--help\')'
complete -c retry -n '__retry_words job show' -l budget-store -x -d 'Where budgets live: file, file:DIR, or redis://HOST'
complete -c retry -n '__retry_words job show' -l log-format -x -a '(printf "%s\t%s\n" "text" "One line of prose per event, prefixed `retry:`" "json" "One JSON object per line, with an `event` key")' -d 'Print it as text, or as one JSON object (json)'
complete -c retry -n '__retry_words job show' -s h -l help -d 'Print help (see more with \'--help\')'
complete -c retry -n '__retry_words job set' -l overlap -x -a '(printf "%s\t%s\n" "allow" "Runs of the job overlap as they come" "skip" "A run that finds another in progress makes no attempt, and exits 75" "wait" "A run that finds another in progress waits for it to end, within --max-time")' -d 'Whether a run of the job may start while another is in progress, on any machine that shares the store: allow, skip (it makes no attempt and exits 75) or wait (for the other to end, within its --max-time), e.g. skip (kept when not given; allow the first time)'
complete -c retry -n '__retry_words job set' -l alert-after -x -d 'From which failed run in a row the job\'s monitor (RETRY_MONITOR) is told of a failure, 1 to 99, e.g. 3 (kept when not given; 1 the first time)'
complete -c retry -n '__retry_words job set' -l schedule -x -d 'When the job is due, in cron\'s five fields (or an @ name), optionally after CRON_TZ=ZONE: a run of the job ends before the next slot, its last status its own, and a failed run is retried until then and never past it; none to keep none, e.g. \'*/15 * * * *\' (kept when not given; none the first time)'
complete -c retry -n '__retry_words job set' -l budget-store -x -d 'Where budgets live: file, file:DIR, or redis://HOST'
complete -c retry -n '__retry_words job set' -s h -l help -d 'Print help (see more with \'--help\')'
complete -c retry -n '__retry_words job history' -l budget-store -x -d 'Where budgets live: file, file:DIR, or redis://HOST'
complete -c retry -n '__retry_words job history' -l log-format -x -a '(printf "%s\t%s\n" "text" "One line of prose per event, prefixed `retry:`" "json" "One JSON object per line, with an `event` key")' -d 'Print it as text, or as one JSON object (json)'
complete -c retry -n '__retry_words job history' -s h -l help -d 'Print help (see more with \'--help\')'
