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
    __retry_words budget
end

function __retry_own
    not __retry_subcommand; and not __retry_command_tokens >/dev/null
end

complete -c retry -f
complete -c retry -n 'not __retry_subcommand; and __retry_command_tokens >/dev/null' -a '(__fish_complete_subcommand --commandline (__retry_command_tokens))'
complete -c retry -n 'not __retry_subcommand; and test (count (commandline -opc)) = 1' -a budget -d 'Print a budget\'s state now: its tokens, its counters, and when it will be full'
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
complete -c retry -n '__retry_words budget show' -l budget-store -x -d 'Where the budget lives: file, or a redis:// URL, as runs give it [default: $RETRY_BUDGET_STORE, or file]'
complete -c retry -n '__retry_words budget show' -l budget-password-file -r -F -d 'Read the store\'s password from the first line of FILE, as runs do'
complete -c retry -n '__retry_words budget show' -l budget-dir -r -F -d 'Where the file store keeps budgets [default: $XDG_STATE_HOME/retry/budgets, or ~/.local/state/retry/budgets]'
complete -c retry -n '__retry_words budget show' -l log-format -x -a '(printf "%s\t%s\n" "text" "One line of prose per event, prefixed `retry:`" "json" "One JSON object per line, with an `event` key")' -d 'Print the state as text, or as one JSON object (json)'
complete -c retry -n '__retry_words budget show' -s h -l help -d 'Print help (see more with \'--help\')'
