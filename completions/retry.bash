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
            -n|--max-attempts|--base|--cap|--jitter|--multiplier|--reset-after|--seed|--retry-on|--stop-on|--success-on|--flaky-exit|--preset|--retry-after-output|-t|--timeout|--max-time|--timeout-signal|--kill-after|--hold|--log-format|--ci|--report|--job|--on-retry|--on-give-up|--splay|--budget|--budget-store) ((i++)) ;;
            -*) ;;
            budget|job) if ((i == 1)); then _retry_${words[i]}; return; fi
                _command_offset $i; return ;;
            *) _command_offset $i; return ;;
        esac
    done
    case $prev in
        -n|--max-attempts) :; return ;;
        --base) :; return ;;
        --cap) :; return ;;
        --jitter) COMPREPLY=($(compgen -W 'none full equal decorrelated' -- "$cur")); return ;;
        --multiplier) :; return ;;
        --reset-after) :; return ;;
        --seed) :; return ;;
        --retry-on) :; return ;;
        --stop-on) :; return ;;
        --success-on) :; return ;;
        --flaky-exit) :; return ;;
        --preset) COMPREPLY=($(compgen -W 'auto curl wget git rsync ssh psql pg_isready apt-get pip npm' -- "$cur")); return ;;
        --retry-after-output) :; return ;;
        -t|--timeout) :; return ;;
        --max-time) :; return ;;
        --timeout-signal) COMPREPLY=($(compgen -W 'TERM INT HUP QUIT USR1 USR2 KILL' -- "$cur")); return ;;
        --kill-after) :; return ;;
        --hold) COMPREPLY=($(compgen -W 'stdout all' -- "$cur")); return ;;
        --log-format) COMPREPLY=($(compgen -W 'text json' -- "$cur")); return ;;
        --ci) COMPREPLY=($(compgen -W 'auto none github gitlab buildkite azure' -- "$cur")); return ;;
        --report) _filedir; return ;;
        --job) :; return ;;
        --on-retry) :; return ;;
        --on-give-up) :; return ;;
        --splay) :; return ;;
        --budget) :; return ;;
        --budget-store) :; return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W '-n --max-attempts --base --cap --jitter --multiplier --reset-after --seed --retry-on --stop-on --success-on --flaky-exit --preset --retry-after-output -t --timeout --max-time --timeout-signal --kill-after --foreground --replay-stdin --shell --plan -q --quiet -v --verbose --hold --log-format --ci --report --job --on-retry --on-give-up --splay --budget --budget-store -h --help -V --version' -- "$cur"))
        return
    fi
    _command_offset $cword
    if ((cword == 1)); then COMPREPLY+=($(compgen -W 'budget job' -- "$cur")); fi
}

_retry_budget() {
    if ((cword == 2)); then COMPREPLY=($(compgen -W 'show set' -- "$cur")); return; fi
    case ${words[2]} in
        show) _retry_budget_show ;;
        set) _retry_budget_set ;;
    esac
}

_retry_budget_show() {
    case $prev in
        --budget-store) :; return ;;
        --log-format) COMPREPLY=($(compgen -W 'text json' -- "$cur")); return ;;
    esac
    COMPREPLY=($(compgen -W '--budget-store --log-format -h --help' -- "$cur"))
}

_retry_budget_set() {
    case $prev in
        --rate) :; return ;;
        --ratio) :; return ;;
        --window) :; return ;;
        --breaker) :; return ;;
        --breaker-share) :; return ;;
        --breaker-hosts) :; return ;;
        --cool-down) :; return ;;
        --clear) COMPREPLY=($(compgen -W 'ratio breaker' -- "$cur")); return ;;
        --budget-store) :; return ;;
    esac
    COMPREPLY=($(compgen -W '--rate --ratio --window --breaker --breaker-share --breaker-hosts --cool-down --clear --budget-store -h --help' -- "$cur"))
}

_retry_job() {
    if ((cword == 2)); then COMPREPLY=($(compgen -W 'show set history' -- "$cur")); return; fi
    case ${words[2]} in
        show) _retry_job_show ;;
        set) _retry_job_set ;;
        history) _retry_job_history ;;
    esac
}

_retry_job_show() {
    case $prev in
        --budget-store) :; return ;;
        --log-format) COMPREPLY=($(compgen -W 'text json' -- "$cur")); return ;;
    esac
    COMPREPLY=($(compgen -W '--budget-store --log-format -h --help' -- "$cur"))
}

_retry_job_set() {
    case $prev in
        --overlap) COMPREPLY=($(compgen -W 'allow skip wait' -- "$cur")); return ;;
        --alert-after) :; return ;;
        --schedule) :; return ;;
        --budget-store) :; return ;;
    esac
    COMPREPLY=($(compgen -W '--overlap --alert-after --schedule --budget-store -h --help' -- "$cur"))
}

_retry_job_history() {
    case $prev in
        --budget-store) :; return ;;
        --log-format) COMPREPLY=($(compgen -W 'text json' -- "$cur")); return ;;
    esac
    COMPREPLY=($(compgen -W '--budget-store --log-format -h --help' -- "$cur"))
}

complete -F _retry retry
