
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'retry' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'retry'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'retry' {
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Most attempts, the first included')
            [CompletionResult]::new('--max-attempts', '--max-attempts', [CompletionResultType]::ParameterName, 'Most attempts, the first included')
            [CompletionResult]::new('--base', '--base', [CompletionResultType]::ParameterName, 'The first wait; later waits grow')
            [CompletionResult]::new('--cap', '--cap', [CompletionResultType]::ParameterName, 'The longest backoff wait')
            [CompletionResult]::new('--jitter', '--jitter', [CompletionResultType]::ParameterName, 'none, full, equal or decorrelated')
            [CompletionResult]::new('--multiplier', '--multiplier', [CompletionResultType]::ParameterName, 'Growth of the longest wait per retry')
            [CompletionResult]::new('--reset-after', '--reset-after', [CompletionResultType]::ParameterName, 'Start over after a failure this long')
            [CompletionResult]::new('--seed', '--seed', [CompletionResultType]::ParameterName, 'Seed the jitter: a number, or ''host''')
            [CompletionResult]::new('--retry-on', '--retry-on', [CompletionResultType]::ParameterName, 'Retry what RULE names; may be repeated')
            [CompletionResult]::new('--stop-on', '--stop-on', [CompletionResultType]::ParameterName, 'Never retry what RULE names; may be repeated')
            [CompletionResult]::new('--success-on', '--success-on', [CompletionResultType]::ParameterName, 'Count what RULE names as success [default: 0]')
            [CompletionResult]::new('--flaky-exit', '--flaky-exit', [CompletionResultType]::ParameterName, 'Exit STATUS after a success that needed retries')
            [CompletionResult]::new('--preset', '--preset', [CompletionResultType]::ParameterName, 'As a program''s manual says: curl, git, ... or auto')
            [CompletionResult]::new('--retry-after-output', '--retry-after-output', [CompletionResultType]::ParameterName, 'Wait as long as a line of output asks')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'Time limit of one attempt (status 124)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Time limit of one attempt (status 124)')
            [CompletionResult]::new('--max-time', '--max-time', [CompletionResultType]::ParameterName, 'Time limit of the whole run')
            [CompletionResult]::new('--timeout-signal', '--timeout-signal', [CompletionResultType]::ParameterName, 'The signal a time limit sends first')
            [CompletionResult]::new('--kill-after', '--kill-after', [CompletionResultType]::ParameterName, 'SIGKILL this long after SIGTERM')
            [CompletionResult]::new('--hold', '--hold', [CompletionResultType]::ParameterName, 'Hold output until its attempt is judged: stdout or all')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'text, or json: one object a line')
            [CompletionResult]::new('--ci', '--ci', [CompletionResultType]::ParameterName, 'auto, none, github, gitlab, buildkite or azure')
            [CompletionResult]::new('--report', '--report', [CompletionResultType]::ParameterName, 'Write a report to FILE when the run ends; may be repeated')
            [CompletionResult]::new('--job', '--job', [CompletionResultType]::ParameterName, 'The job''s name, for its history, metrics and CI groups')
            [CompletionResult]::new('--on-retry', '--on-retry', [CompletionResultType]::ParameterName, 'Run SHELL_LINE before each retry''s wait')
            [CompletionResult]::new('--on-give-up', '--on-give-up', [CompletionResultType]::ParameterName, 'Run SHELL_LINE once when the run gives up')
            [CompletionResult]::new('--splay', '--splay', [CompletionResultType]::ParameterName, 'A random wait below DURATION before the first attempt')
            [CompletionResult]::new('--budget', '--budget', [CompletionResultType]::ParameterName, 'Share the retry budget NAME, or ''off''')
            [CompletionResult]::new('--budget-store', '--budget-store', [CompletionResultType]::ParameterName, 'Where budgets live: file, file:DIR, or redis://HOST')
            [CompletionResult]::new('--foreground', '--foreground', [CompletionResultType]::ParameterName, 'Keep COMMAND in retry''s process group')
            [CompletionResult]::new('--replay-stdin', '--replay-stdin', [CompletionResultType]::ParameterName, 'Give every attempt the same stdin')
            [CompletionResult]::new('--shell', '--shell', [CompletionResultType]::ParameterName, 'Run COMMAND and ARGs as one `sh -c` line')
            [CompletionResult]::new('--plan', '--plan', [CompletionResultType]::ParameterName, 'Print the waits and the rules; run nothing')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Say nothing of the tool''s own')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Say nothing of the tool''s own')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Also say each attempt''s start and a success')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Also say each attempt''s start and a success')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('budget', 'budget', [CompletionResultType]::ParameterValue, 'budget')
            [CompletionResult]::new('job', 'job', [CompletionResultType]::ParameterValue, 'job')
            break
        }
        'retry;budget' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print a budget''s state now: its terms, its tokens, its counters, and when it will be full')
            [CompletionResult]::new('set', 'set', [CompletionResultType]::ParameterValue, 'Set a budget''s terms, which every run that shares the budget uses')
            break
        }
        'retry;budget;show' {
            [CompletionResult]::new('--budget-store', '--budget-store', [CompletionResultType]::ParameterName, 'Where budgets live: file, file:DIR, or redis://HOST')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Print it as text, or as one JSON object (json)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'retry;budget;set' {
            [CompletionResult]::new('--rate', '--rate', [CompletionResultType]::ParameterName, 'At most N tokens, regaining N every DURATION; each retry takes one (e.g. 10/1m); needed the first time, kept when not given')
            [CompletionResult]::new('--ratio', '--ratio', [CompletionResultType]::ParameterName, 'Also earn R tokens (more than 0, at most 1, e.g. 0.1) for every first attempt of any run sharing the budget, spent before the rate''s, at once or not at all (kept when not given; none the first time)')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'Let earned tokens fade exponentially with this time constant (e.g. 30s, 5m; kept when not given; 1m the first time)')
            [CompletionResult]::new('--breaker', '--breaker', [CompletionResultType]::ParameterName, 'A breaker: once N runs sharing the budget gave up within DURATION, runs make no attempt (they exit 75) until a cool-down is over, when one run''s attempt decides (e.g. 5/1m; kept when not given; none the first time)')
            [CompletionResult]::new('--breaker-share', '--breaker-share', [CompletionResultType]::ParameterName, 'The breaker opens only when the runs that gave up are at least this share of the runs that ended in its window (more than 0, at most 1; kept when not given; 0.5 the first time)')
            [CompletionResult]::new('--breaker-hosts', '--breaker-hosts', [CompletionResultType]::ParameterName, 'On a shared store, the breaker opens only when the runs that gave up came from at least this many hosts (1 to 16; kept when not given; 2 the first time), so that one broken host cannot stop a fleet')
            [CompletionResult]::new('--cool-down', '--cool-down', [CompletionResultType]::ParameterName, 'How long the breaker stays open the first time; each re-opening doubles it, up to 32 times (e.g. 30s, 5m; kept when not given; 30s the first time)')
            [CompletionResult]::new('--clear', '--clear', [CompletionResultType]::ParameterName, 'Remove a term: ratio (no tokens earned) or breaker; refused beside the --ratio or --breaker that would set it. May be repeated')
            [CompletionResult]::new('--budget-store', '--budget-store', [CompletionResultType]::ParameterName, 'Where budgets live: file, file:DIR, or redis://HOST')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'retry;job' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print a job''s terms: whether its runs may overlap, and the run in progress')
            [CompletionResult]::new('set', 'set', [CompletionResultType]::ParameterValue, 'Set a job''s terms, which every run of the job obeys')
            [CompletionResult]::new('history', 'history', [CompletionResultType]::ParameterValue, 'Print a job''s history of runs: clean, flaky and failed, and its pass rate')
            break
        }
        'retry;job;show' {
            [CompletionResult]::new('--budget-store', '--budget-store', [CompletionResultType]::ParameterName, 'Where budgets live: file, file:DIR, or redis://HOST')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Print it as text, or as one JSON object (json)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'retry;job;set' {
            [CompletionResult]::new('--overlap', '--overlap', [CompletionResultType]::ParameterName, 'Whether a run of the job may start while another is in progress, on any machine that shares the store: allow, skip (it makes no attempt and exits 75) or wait (for the other to end, within its --max-time), e.g. skip (kept when not given; allow the first time)')
            [CompletionResult]::new('--alert-after', '--alert-after', [CompletionResultType]::ParameterName, 'From which failed run in a row the job''s monitor (RETRY_MONITOR) is told of a failure, 1 to 99, e.g. 3 (kept when not given; 1 the first time)')
            [CompletionResult]::new('--schedule', '--schedule', [CompletionResultType]::ParameterName, 'When the job is due, in cron''s five fields (or an @ name), optionally after CRON_TZ=ZONE: a run of the job ends before the next slot, its last status its own, and a failed run is retried until then and never past it; none to keep none, e.g. ''*/15 * * * *'' (kept when not given; none the first time)')
            [CompletionResult]::new('--budget-store', '--budget-store', [CompletionResultType]::ParameterName, 'Where budgets live: file, file:DIR, or redis://HOST')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'retry;job;history' {
            [CompletionResult]::new('--budget-store', '--budget-store', [CompletionResultType]::ParameterName, 'Where budgets live: file, file:DIR, or redis://HOST')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Print it as text, or as one JSON object (json)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
