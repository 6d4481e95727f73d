
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
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Make at most N attempts in total, the first included')
            [CompletionResult]::new('--max-attempts', '--max-attempts', [CompletionResultType]::ParameterName, 'Make at most N attempts in total, the first included')
            [CompletionResult]::new('--base', '--base', [CompletionResultType]::ParameterName, 'The first wait; later ones grow from it')
            [CompletionResult]::new('--cap', '--cap', [CompletionResultType]::ParameterName, 'The longest single wait')
            [CompletionResult]::new('--multiplier', '--multiplier', [CompletionResultType]::ParameterName, 'Growth of the longest wait per retry')
            [CompletionResult]::new('--jitter', '--jitter', [CompletionResultType]::ParameterName, 'How the waits are spread')
            [CompletionResult]::new('--reset-after', '--reset-after', [CompletionResultType]::ParameterName, 'Start over after a failure this long')
            [CompletionResult]::new('--seed', '--seed', [CompletionResultType]::ParameterName, 'Seed the jitter: a number, or ''host''')
            [CompletionResult]::new('--retry-on', '--retry-on', [CompletionResultType]::ParameterName, 'Retry only these exit statuses')
            [CompletionResult]::new('--stop-on', '--stop-on', [CompletionResultType]::ParameterName, 'Never retry these exit statuses')
            [CompletionResult]::new('--preset', '--preset', [CompletionResultType]::ParameterName, 'Decide as a program''s manual says: curl, git, ssh, ... or auto')
            [CompletionResult]::new('--success-on', '--success-on', [CompletionResultType]::ParameterName, 'Exit statuses that count as success')
            [CompletionResult]::new('--retry-on-output', '--retry-on-output', [CompletionResultType]::ParameterName, 'Retry only if a line of output matches')
            [CompletionResult]::new('--stop-on-output', '--stop-on-output', [CompletionResultType]::ParameterName, 'Never retry if a line of output matches')
            [CompletionResult]::new('--success-on-output', '--success-on-output', [CompletionResultType]::ParameterName, 'Succeed only once a line of output matches')
            [CompletionResult]::new('--output-stream', '--output-stream', [CompletionResultType]::ParameterName, 'Which streams the output conditions read')
            [CompletionResult]::new('--retry-after-output', '--retry-after-output', [CompletionResultType]::ParameterName, 'Wait as long as a line of output asks')
            [CompletionResult]::new('--max-requested-wait', '--max-requested-wait', [CompletionResultType]::ParameterName, 'The longest requested wait honoured')
            [CompletionResult]::new('--nested', '--nested', [CompletionResultType]::ParameterName, 'Inside another retry: once, retry or quiet')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'Time limit of one attempt (status 124)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Time limit of one attempt (status 124)')
            [CompletionResult]::new('--max-time', '--max-time', [CompletionResultType]::ParameterName, 'Time limit of the whole run')
            [CompletionResult]::new('--timeout-signal', '--timeout-signal', [CompletionResultType]::ParameterName, 'The signal a time limit sends first')
            [CompletionResult]::new('--kill-after', '--kill-after', [CompletionResultType]::ParameterName, 'SIGKILL this long after SIGTERM')
            [CompletionResult]::new('--on-retry', '--on-retry', [CompletionResultType]::ParameterName, 'Run SHELL_LINE before each retry''s wait')
            [CompletionResult]::new('--on-give-up', '--on-give-up', [CompletionResultType]::ParameterName, 'Run SHELL_LINE once when the run gives up')
            [CompletionResult]::new('--report', '--report', [CompletionResultType]::ParameterName, 'Write a JSON summary of the run to FILE')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'text, or json: one object a line')
            [CompletionResult]::new('--ci', '--ci', [CompletionResultType]::ParameterName, 'auto, none, github, gitlab, buildkite or azure')
            [CompletionResult]::new('--report-dotenv', '--report-dotenv', [CompletionResultType]::ParameterName, 'Write the run''s outcome to FILE as NAME=value lines')
            [CompletionResult]::new('--metrics', '--metrics', [CompletionResultType]::ParameterName, 'Write the run''s metrics to FILE, for node_exporter')
            [CompletionResult]::new('--metrics-job', '--metrics-job', [CompletionResultType]::ParameterName, 'The job label of the --metrics gauges')
            [CompletionResult]::new('--splay', '--splay', [CompletionResultType]::ParameterName, 'A random wait below DURATION before the first attempt')
            [CompletionResult]::new('--budget', '--budget', [CompletionResultType]::ParameterName, 'Share a retry budget named NAME')
            [CompletionResult]::new('--budget-rate', '--budget-rate', [CompletionResultType]::ParameterName, 'At most N tokens, N more every DURATION')
            [CompletionResult]::new('--budget-ratio', '--budget-ratio', [CompletionResultType]::ParameterName, 'Also earn R tokens per first attempt (e.g. 0.1)')
            [CompletionResult]::new('--budget-window', '--budget-window', [CompletionResultType]::ParameterName, 'How long earned tokens last')
            [CompletionResult]::new('--budget-store', '--budget-store', [CompletionResultType]::ParameterName, 'Where the budget lives: file, or redis://HOST')
            [CompletionResult]::new('--budget-password-file', '--budget-password-file', [CompletionResultType]::ParameterName, 'Read the store''s password from FILE')
            [CompletionResult]::new('--budget-store-fail', '--budget-store-fail', [CompletionResultType]::ParameterName, 'When the budget cannot be used: open or closed')
            [CompletionResult]::new('--budget-dir', '--budget-dir', [CompletionResultType]::ParameterName, 'Where the file store keeps budgets')
            [CompletionResult]::new('--plan', '--plan', [CompletionResultType]::ParameterName, 'Print the waits, and run nothing')
            [CompletionResult]::new('--foreground', '--foreground', [CompletionResultType]::ParameterName, 'Keep COMMAND in retry''s process group')
            [CompletionResult]::new('--replay-stdin', '--replay-stdin', [CompletionResultType]::ParameterName, 'Give every attempt the same stdin')
            [CompletionResult]::new('--shell', '--shell', [CompletionResultType]::ParameterName, 'Run COMMAND and ARGs as one `sh -c` line')
            [CompletionResult]::new('--hold-output', '--hold-output', [CompletionResultType]::ParameterName, 'Write only the successful attempt''s stdout')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Say nothing of the tool''s own')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Say nothing of the tool''s own')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Also say each attempt''s start and a success')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Also say each attempt''s start and a success')
            [CompletionResult]::new('--quiet-unless-failed', '--quiet-unless-failed', [CompletionResultType]::ParameterName, 'Write nothing unless the run fails')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('budget', 'budget', [CompletionResultType]::ParameterValue, 'budget')
            break
        }
        'retry;budget' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print a budget''s state now: its tokens, its counters, and when it will be full')
            break
        }
        'retry;budget;show' {
            [CompletionResult]::new('--budget-store', '--budget-store', [CompletionResultType]::ParameterName, 'Where the budget lives: file, or a redis:// URL, as runs give it [default: $RETRY_BUDGET_STORE, or file]')
            [CompletionResult]::new('--budget-password-file', '--budget-password-file', [CompletionResultType]::ParameterName, 'Read the store''s password from the first line of FILE, as runs do')
            [CompletionResult]::new('--budget-dir', '--budget-dir', [CompletionResultType]::ParameterName, 'Where the file store keeps budgets [default: $XDG_STATE_HOME/retry/budgets, or ~/.local/state/retry/budgets]')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Print the state as text, or as one JSON object (json)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
