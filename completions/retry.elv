
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
            cand budget 'budget'
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
