
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
            cand -n 'Most attempts, the first included'
            cand --max-attempts 'Most attempts, the first included'
            cand --base 'The first wait; later waits grow'
            cand --cap 'The longest backoff wait'
            cand --jitter 'none, full, equal or decorrelated'
            cand --multiplier 'Growth of the longest wait per retry'
            cand --reset-after 'Start over after a failure this long'
            cand --seed 'Seed the jitter: a number, or ''host'''
            cand --retry-on 'Retry what RULE names; may be repeated'
            cand --stop-on 'Never retry what RULE names; may be repeated'
            cand --success-on 'Count what RULE names as success [default: 0]'
            cand --flaky-exit 'Exit STATUS after a success that needed retries'
            cand --preset 'As a program''s manual says: curl, git, ... or auto'
            cand --retry-after-output 'Wait as long as a line of output asks'
            cand -t 'Time limit of one attempt (status 124)'
            cand --timeout 'Time limit of one attempt (status 124)'
            cand --max-time 'Time limit of the whole run'
            cand --timeout-signal 'The signal a time limit sends first'
            cand --kill-after 'SIGKILL this long after SIGTERM'
            cand --hold 'Hold output until its attempt is judged: stdout or all'
            cand --log-format 'text, or json: one object a line'
            cand --ci 'auto, none, github, gitlab, buildkite or azure'
            cand --report 'Write a report to FILE when the run ends; may be repeated'
            cand --job 'The job''s name, for its history, metrics and CI groups'
            cand --on-retry 'Run SHELL_LINE before each retry''s wait'
            cand --on-give-up 'Run SHELL_LINE once when the run gives up'
            cand --splay 'A random wait below DURATION before the first attempt'
            cand --budget 'Share the retry budget NAME, or ''off'''
            cand --budget-store 'Where budgets live: file, file:DIR, or redis://HOST'
            cand --foreground 'Keep COMMAND in retry''s process group'
            cand --replay-stdin 'Give every attempt the same stdin'
            cand --shell 'Run COMMAND and ARGs as one `sh -c` line'
            cand --plan 'Print the waits and the rules; run nothing'
            cand -q 'Say nothing of the tool''s own'
            cand --quiet 'Say nothing of the tool''s own'
            cand -v 'Also say each attempt''s start and a success'
            cand --verbose 'Also say each attempt''s start and a success'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand budget 'budget'
            cand job 'job'
        }
        &'retry;budget'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand show 'Print a budget''s state now: its terms, its tokens, its counters, and when it will be full'
            cand set 'Set a budget''s terms, which every run that shares the budget uses'
        }
        &'retry;budget;show'= {
            cand --budget-store 'Where budgets live: file, file:DIR, or redis://HOST'
            cand --log-format 'Print it as text, or as one JSON object (json)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'retry;budget;set'= {
            cand --rate 'At most N tokens, regaining N every DURATION; each retry takes one (e.g. 10/1m); needed the first time, kept when not given'
            cand --ratio 'Also earn R tokens (more than 0, at most 1, e.g. 0.1) for every first attempt of any run sharing the budget, spent before the rate''s, at once or not at all (kept when not given; none the first time)'
            cand --window 'Let earned tokens fade exponentially with this time constant (e.g. 30s, 5m; kept when not given; 1m the first time)'
            cand --breaker 'A breaker: once N runs sharing the budget gave up within DURATION, runs make no attempt (they exit 75) until a cool-down is over, when one run''s attempt decides (e.g. 5/1m; kept when not given; none the first time)'
            cand --breaker-share 'The breaker opens only when the runs that gave up are at least this share of the runs that ended in its window (more than 0, at most 1; kept when not given; 0.5 the first time)'
            cand --breaker-hosts 'On a shared store, the breaker opens only when the runs that gave up came from at least this many hosts (1 to 16; kept when not given; 2 the first time), so that one broken host cannot stop a fleet'
            cand --cool-down 'How long the breaker stays open the first time; each re-opening doubles it, up to 32 times (e.g. 30s, 5m; kept when not given; 30s the first time)'
            cand --clear 'Remove a term: ratio (no tokens earned) or breaker; refused beside the --ratio or --breaker that would set it. May be repeated'
            cand --budget-store 'Where budgets live: file, file:DIR, or redis://HOST'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'retry;job'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand show 'Print a job''s terms: whether its runs may overlap, and the run in progress'
            cand set 'Set a job''s terms, which every run of the job obeys'
            cand history 'Print a job''s history of runs: clean, flaky and failed, and its pass rate'
        }
        &'retry;job;show'= {
            cand --budget-store 'Where budgets live: file, file:DIR, or redis://HOST'
            cand --log-format 'Print it as text, or as one JSON object (json)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'retry;job;set'= {
            cand --overlap 'Whether a run of the job may start while another is in progress, on any machine that shares the store: allow, skip (it makes no attempt and exits 75) or wait (for the other to end, within its --max-time), e.g. skip (kept when not given; allow the first time)'
            cand --alert-after 'From which failed run in a row the job''s monitor (RETRY_MONITOR) is told of a failure, 1 to 99, e.g. 3 (kept when not given; 1 the first time)'
            cand --schedule 'When the job is due, in cron''s five fields (or an @ name), optionally after CRON_TZ=ZONE: a run of the job ends before the next slot, its last status its own, and a failed run is retried until then and never past it; none to keep none, e.g. ''*/15 * * * *'' (kept when not given; none the first time)'
            cand --budget-store 'Where budgets live: file, file:DIR, or redis://HOST'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'retry;job;history'= {
            cand --budget-store 'Where budgets live: file, file:DIR, or redis://HOST'
            cand --log-format 'Print it as text, or as one JSON object (json)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
    ]
    $completions[$command]
}
