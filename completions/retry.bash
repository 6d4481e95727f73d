# bash completion for retry, written from its clap definition by `cargo xtask generate`; do not edit.
# After retry's own options, COMMAND completes as a command, and its arguments with its
# own completion, as for timeout. Needs bash-completion (_init_completion,
# _command_offset).

_retry() {
    local cur prev words cword split
    _init_completion -s || return
    local i
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
            --) _command_offset $((i + 1)); return ;;
            -n|--max-attempts|--base|--cap|--multiplier|--jitter|--reset-after|--seed|--retry-on|--stop-on|--preset|--success-on|--retry-on-output|--stop-on-output|--success-on-output|--output-stream|--retry-after-output|--max-requested-wait|--nested|-t|--timeout|--max-time|--timeout-signal|--kill-after|--on-retry|--on-give-up|--report|--log-format|--ci|--report-dotenv|--metrics|--metrics-job|--splay|--budget|--budget-rate|--budget-ratio|--budget-window|--budget-store|--budget-password-file|--budget-store-fail|--budget-dir) ((i++)) ;;
            -*) ;;
            budget) if ((i == 1)); then _retry_budget; return; fi
                _command_offset $i; return ;;
            *) _command_offset $i; return ;;
        esac
    done
    case $prev in
        -n|--max-attempts) :; return ;;
        --base) :; return ;;
        --cap) :; return ;;
        --multiplier) :; return ;;
        --jitter) COMPREPLY=($(compgen -W 'none full equal decorrelated' -- "$cur")); return ;;
        --reset-after) :; return ;;
        --seed) :; return ;;
        --retry-on) :; return ;;
        --stop-on) :; return ;;
        --preset) COMPREPLY=($(compgen -W 'auto curl wget git rsync ssh psql pg_isready apt-get pip npm' -- "$cur")); return ;;
        --success-on) :; return ;;
        --retry-on-output) :; return ;;
        --stop-on-output) :; return ;;
        --success-on-output) :; return ;;
        --output-stream) COMPREPLY=($(compgen -W 'both stdout stderr' -- "$cur")); return ;;
        --retry-after-output) :; return ;;
        --max-requested-wait) :; return ;;
        --nested) COMPREPLY=($(compgen -W 'once retry quiet' -- "$cur")); return ;;
        -t|--timeout) :; return ;;
        --max-time) :; return ;;
        --timeout-signal) :; return ;;
        --kill-after) :; return ;;
        --on-retry) :; return ;;
        --on-give-up) :; return ;;
        --report) _filedir; return ;;
        --log-format) COMPREPLY=($(compgen -W 'text json' -- "$cur")); return ;;
        --ci) COMPREPLY=($(compgen -W 'auto none github gitlab buildkite azure' -- "$cur")); return ;;
        --report-dotenv) _filedir; return ;;
        --metrics) _filedir; return ;;
        --metrics-job) :; return ;;
        --splay) :; return ;;
        --budget) :; return ;;
        --budget-rate) :; return ;;
        --budget-ratio) :; return ;;
        --budget-window) :; return ;;
        --budget-store) :; return ;;
        --budget-password-file) _filedir; return ;;
        --budget-store-fail) COMPREPLY=($(compgen -W 'open closed' -- "$cur")); return ;;
        --budget-dir) _filedir -d; return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W '-n --max-attempts --base --cap --multiplier --jitter --reset-after --seed --plan --retry-on --stop-on --preset --success-on --retry-on-output --stop-on-output --success-on-output --output-stream --retry-after-output --max-requested-wait --nested -t --timeout --max-time --timeout-signal --kill-after --foreground --replay-stdin --shell --on-retry --on-give-up --hold-output --report --log-format -q --quiet -v --verbose --ci --report-dotenv --quiet-unless-failed --metrics --metrics-job --splay --budget --budget-rate --budget-ratio --budget-window --budget-store --budget-password-file --budget-store-fail --budget-dir -h --help -V --version' -- "$cur"))
        return
    fi
    _command_offset $cword
    if ((cword == 1)); then COMPREPLY+=($(compgen -W 'budget' -- "$cur")); fi
}

_retry_budget() {
    if ((cword == 2)); then COMPREPLY=($(compgen -W 'show' -- "$cur")); return; fi
    case ${words[2]} in
        show) _retry_budget_show ;;
    esac
}

_retry_budget_show() {
    case $prev in
        --budget-store) :; return ;;
        --budget-password-file) _filedir; return ;;
        --budget-dir) _filedir -d; return ;;
        --log-format) COMPREPLY=($(compgen -W 'text json' -- "$cur")); return ;;
    esac
    COMPREPLY=($(compgen -W '--budget-store --budget-password-file --budget-dir --log-format -h --help' -- "$cur"))
}

complete -F _retry retry
