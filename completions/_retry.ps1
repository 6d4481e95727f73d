
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
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Make at most N attempts in total, the first included; a whole number or ''unlimited''')
            [CompletionResult]::new('--max-attempts', '--max-attempts', [CompletionResultType]::ParameterName, 'Make at most N attempts in total, the first included; a whole number or ''unlimited''')
            [CompletionResult]::new('--base', '--base', [CompletionResultType]::ParameterName, 'Wait this long after the first failure; the scale of every later wait (e.g. 250ms, 2s; 0s: never wait)')
            [CompletionResult]::new('--cap', '--cap', [CompletionResultType]::ParameterName, 'Never wait longer than this between two attempts (e.g. 30s, 5m)')
            [CompletionResult]::new('--multiplier', '--multiplier', [CompletionResultType]::ParameterName, 'Multiply the longest possible wait by FACTOR after each retry; a number of at least 1 (e.g. 1.5)')
            [CompletionResult]::new('--jitter', '--jitter', [CompletionResultType]::ParameterName, 'Spread the waits with this strategy, so that clients failing together retry apart')
            [CompletionResult]::new('--retry-on', '--retry-on', [CompletionResultType]::ParameterName, 'Retry only when the exit status is in CODES (e.g. 1,75-78); default: any failure')
            [CompletionResult]::new('--stop-on', '--stop-on', [CompletionResultType]::ParameterName, 'Never retry when the exit status is in CODES (e.g. 2,64-78); default: none')
            [CompletionResult]::new('--success-on', '--success-on', [CompletionResultType]::ParameterName, 'Count these exit statuses as success (e.g. 0,3)')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'End an attempt that runs longer than this (SIGTERM, then SIGKILL after --kill-after); it counts as status 124 (e.g. 30s)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'End an attempt that runs longer than this (SIGTERM, then SIGKILL after --kill-after); it counts as status 124 (e.g. 30s)')
            [CompletionResult]::new('--max-time', '--max-time', [CompletionResultType]::ParameterName, 'Limit the whole run, attempts and waits together, counted from the start (e.g. 10m); default: none')
            [CompletionResult]::new('--kill-after', '--kill-after', [CompletionResultType]::ParameterName, 'Send SIGKILL this long after SIGTERM to an attempt still running (after a timeout, the deadline or a passed-on signal)')
            [CompletionResult]::new('--retry-on-output', '--retry-on-output', [CompletionResultType]::ParameterName, 'Retry a failure only if its stdout or stderr has a line matching REGEX (e.g. ''\b503\b''); may be repeated: any match counts')
            [CompletionResult]::new('--stop-on-output', '--stop-on-output', [CompletionResultType]::ParameterName, 'Never retry an attempt whose stdout or stderr has a line matching REGEX (e.g. ''HTTP 4\d\d''); may be repeated')
            [CompletionResult]::new('--reset-after', '--reset-after', [CompletionResultType]::ParameterName, 'Start the backoff and the attempt count over after a failed attempt that ran at least this long (e.g. 10m)')
            [CompletionResult]::new('--report', '--report', [CompletionResultType]::ParameterName, 'Write a JSON summary of the run to FILE when it ends (e.g. retry-report.json)')
            [CompletionResult]::new('--seed', '--seed', [CompletionResultType]::ParameterName, 'Seed the jitter''s random numbers with N (0 to 2^64-1) to make the waits reproducible, or with ''host'' to derive it from the host name and the command; default: random')
            [CompletionResult]::new('--splay', '--splay', [CompletionResultType]::ParameterName, 'Wait a random time below DURATION before the first attempt, drawn from the seed, so that a fleet''s cron jobs spread out (e.g. 5m)')
            [CompletionResult]::new('--budget', '--budget', [CompletionResultType]::ParameterName, 'Share a retry budget with every other run on this machine naming the same budget (e.g. the API host they call)')
            [CompletionResult]::new('--budget-rate', '--budget-rate', [CompletionResultType]::ParameterName, 'Let the budget hold at most N tokens, regaining N every DURATION; each retry takes one')
            [CompletionResult]::new('--budget-dir', '--budget-dir', [CompletionResultType]::ParameterName, 'Keep budget state in DIR [default: $XDG_STATE_HOME/retry/budgets, or ~/.local/state/retry/budgets]')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Write the tool''s own messages on stderr in this form (json: one object per line)')
            [CompletionResult]::new('--foreground', '--foreground', [CompletionResultType]::ParameterName, 'Keep COMMAND in retry''s own process group, like `timeout --foreground`: timeouts and signals then reach only COMMAND, not its children')
            [CompletionResult]::new('--replay-stdin', '--replay-stdin', [CompletionResultType]::ParameterName, 'Read stdin to its end before the first attempt, and give every attempt the same bytes')
            [CompletionResult]::new('--hold-output', '--hold-output', [CompletionResultType]::ParameterName, 'Hold each attempt''s stdout: write it to stdout only for the attempt that succeeds, to stderr for the others')
            [CompletionResult]::new('--shell', '--shell', [CompletionResultType]::ParameterName, 'Join COMMAND and its ARGs with spaces and run the line with `sh -c`')
            [CompletionResult]::new('--plan', '--plan', [CompletionResultType]::ParameterName, 'Print the waits these options give, and exit without running COMMAND')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print none of the tool''s own messages (errors in its own usage still print)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print none of the tool''s own messages (errors in its own usage still print)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Also report each attempt''s start and a success')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Also report each attempt''s start and a success')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('simulate', 'simulate', [CompletionResultType]::ParameterValue, 'Rerun the AWS "Exponential Backoff And Jitter" contention experiment with this tool''s own backoff')
            break
        }
        'retry;simulate' {
            [CompletionResult]::new('--clients', '--clients', [CompletionResultType]::ParameterName, 'Simulate these client counts: a list, or ranges with a step (e.g. 10,50,100 or 10-190/10)')
            [CompletionResult]::new('--jitter', '--jitter', [CompletionResultType]::ParameterName, 'Compare these jitter strategies (a comma-separated list); the no-backoff baseline is always shown')
            [CompletionResult]::new('--base', '--base', [CompletionResultType]::ParameterName, 'The first wait, and the scale of the others (e.g. 5ms)')
            [CompletionResult]::new('--cap', '--cap', [CompletionResultType]::ParameterName, 'The longest single wait')
            [CompletionResult]::new('--multiplier', '--multiplier', [CompletionResultType]::ParameterName, 'Growth of the longest possible wait per retry; a number of at least 1')
            [CompletionResult]::new('--trials', '--trials', [CompletionResultType]::ParameterName, 'Run N trials per strategy and client count; the table reports their mean and spread')
            [CompletionResult]::new('--seed', '--seed', [CompletionResultType]::ParameterName, 'Seed the simulation (0 to 2^64-1) for reproducible results, whatever the number of threads; default: random')
            [CompletionResult]::new('--csv', '--csv', [CompletionResultType]::ParameterName, 'Also write every statistic to FILE as CSV, one row per strategy and client count')
            [CompletionResult]::new('--svg', '--svg', [CompletionResultType]::ParameterName, 'Also draw work and completion time against clients to FILE as SVG')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
