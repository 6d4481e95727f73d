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
            case '-n' '--max-attempts' '--base' '--cap' '--multiplier' '--jitter' '--reset-after' '--seed' '--retry-on' '--stop-on' '--success-on' '--retry-on-output' '--stop-on-output' '--success-on-output' '--output-stream' '--retry-after-output' '--max-requested-wait' '--nested' '-t' '--timeout' '--max-time' '--timeout-signal' '--kill-after' '--on-retry' '--on-give-up' '--report' '--log-format' '--splay' '--budget' '--budget-rate' '--budget-ratio' '--budget-window' '--budget-store' '--budget-password-file' '--budget-store-fail' '--budget-dir'
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

function __retry_simulating
    set -l tokens (commandline -opc)
    test "$tokens[2]" = simulate
end

function __retry_own
    not __retry_simulating; and not __retry_command_tokens >/dev/null
end

complete -c retry -f
complete -c retry -n 'not __retry_simulating; and __retry_command_tokens >/dev/null' -a '(__fish_complete_subcommand --commandline (__retry_command_tokens))'
complete -c retry -n 'not __retry_simulating; and test (count (commandline -opc)) = 1' -a simulate -d 'Run the contention simulator'
complete -c retry -n __retry_own -s n -l max-attempts -x -d 'Make at most N attempts in total, the first included'
complete -c retry -n __retry_own -l base -x -d 'The first wait; later ones grow from it'
complete -c retry -n __retry_own -l cap -x -d 'The longest single wait'
complete -c retry -n __retry_own -l multiplier -x -d 'Growth of the longest wait per retry'
complete -c retry -n __retry_own -l jitter -x -a 'none full equal decorrelated' -d 'How the waits are spread'
complete -c retry -n __retry_own -l reset-after -x -d 'Start over after a failure this long'
complete -c retry -n __retry_own -l seed -x -d 'Seed the jitter: a number, or \'host\''
complete -c retry -n __retry_own -l plan -d 'Print the waits, and run nothing'
complete -c retry -n __retry_own -l retry-on -x -d 'Retry only these exit statuses'
complete -c retry -n __retry_own -l stop-on -x -d 'Never retry these exit statuses'
complete -c retry -n __retry_own -l success-on -x -d 'Exit statuses that count as success'
complete -c retry -n __retry_own -l retry-on-output -x -d 'Retry only if a line of output matches'
complete -c retry -n __retry_own -l stop-on-output -x -d 'Never retry if a line of output matches'
complete -c retry -n __retry_own -l success-on-output -x -d 'Succeed only once a line of output matches'
complete -c retry -n __retry_own -l output-stream -x -a 'both stdout stderr' -d 'Which streams the output conditions read'
complete -c retry -n __retry_own -l retry-after-output -x -d 'Wait as long as a line of output asks'
complete -c retry -n __retry_own -l max-requested-wait -x -d 'The longest requested wait honoured'
complete -c retry -n __retry_own -l nested -x -a 'once retry quiet' -d 'Inside another retry: once, retry or quiet'
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
complete -c retry -n __retry_own -l log-format -x -a 'text json' -d 'text, or json: one object a line'
complete -c retry -n __retry_own -s q -l quiet -d 'Say nothing of the tool\'s own'
complete -c retry -n __retry_own -s v -l verbose -d 'Also say each attempt\'s start and a success'
complete -c retry -n __retry_own -l splay -x -d 'A random wait below DURATION before the first attempt'
complete -c retry -n __retry_own -l budget -x -d 'Share a retry budget named NAME'
complete -c retry -n __retry_own -l budget-rate -x -d 'At most N tokens, N more every DURATION'
complete -c retry -n __retry_own -l budget-ratio -x -d 'Also earn R tokens per first attempt (e.g. 0.1)'
complete -c retry -n __retry_own -l budget-window -x -d 'How long earned tokens last'
complete -c retry -n __retry_own -l budget-store -x -d 'Where the budget lives: file, or redis://HOST'
complete -c retry -n __retry_own -l budget-password-file -r -F -d 'Read the store\'s password from FILE'
complete -c retry -n __retry_own -l budget-store-fail -x -a 'open closed' -d 'When the budget cannot be used: open or closed'
complete -c retry -n __retry_own -l budget-dir -r -F -d 'Where the file store keeps budgets'
complete -c retry -n __retry_own -s h -l help -d 'Print help (see more with \'--help\')'
complete -c retry -n __retry_own -s V -l version -d 'Print version'
complete -c retry -n __retry_simulating -l clients -x -d 'Simulate these client counts: a list, or ranges with a step (e.g. 10,50,100 or 10-190/10)'
complete -c retry -n __retry_simulating -l jitter -x -a 'none full equal decorrelated' -d 'Compare these jitter strategies (a comma-separated list); the no-backoff baseline is always shown'
complete -c retry -n __retry_simulating -l base -x -d 'The first wait, and the scale of the others (e.g. 5ms)'
complete -c retry -n __retry_simulating -l cap -x -d 'The longest single wait'
complete -c retry -n __retry_simulating -l multiplier -x -d 'Growth of the longest possible wait per retry; a number of at least 1'
complete -c retry -n __retry_simulating -l trials -x -d 'Run N trials per strategy and client count; the table reports their mean and spread'
complete -c retry -n __retry_simulating -l seed -x -d 'Seed the simulation (0 to 2^64-1) for reproducible results, whatever the number of threads; default: random'
complete -c retry -n __retry_simulating -l csv -r -F -d 'Also write every statistic to FILE as CSV, one row per point of the table'
complete -c retry -n __retry_simulating -l svg -r -F -d 'Also draw the table\'s means to FILE as SVG, one line per strategy or policy'
complete -c retry -n __retry_simulating -s h -l help -d 'Print help (see more with \'--help\')'
