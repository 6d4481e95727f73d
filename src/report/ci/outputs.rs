//! The run's outcome for the later steps of a CI job, written when it ends: on GitHub its values
//! appended to `$GITHUB_OUTPUT` and a Markdown table of its attempts to `$GITHUB_STEP_SUMMARY`
//! (the runner's own files, checked and opened before the first attempt as every file written at
//! the end is, by `target`); and, in any system,
//! `--report dotenv:FILE`, the values as a dotenv file for GitLab's `artifacts:reports:dotenv`.
//!
//! The table keeps the first and the last attempts ([`ROWS_AT_EACH_END`] of each) and counts
//! those between, so that a long run cannot fill the summary.

use retry_process::signals::signal::Platform;
use std::path::PathBuf;
use std::time::Instant;

use crate::environment::{GITHUB_OUTPUT, GITHUB_STEP_SUMMARY};
use crate::first_and_last::FirstAndLast;
use crate::report::ci::log::outcome_values;
use crate::report::end_file::EndFile;
use crate::report::target::{Refused, ReportError, ReportTarget};
use crate::report::text;
use retry_policy::duration::format_duration;
use retry_policy::events::{Event, EventSink};
use retry_policy::outcome::{AttemptOutcome, Next, Reason, RunEnd};
use retry_policy::printable::printable;
use retry_policy::termination::{Termination, TimeLimit};
use retry_process::signals::SignalWatch;

/// How many attempts the summary's table shows at each end of the run.
const ROWS_AT_EACH_END: usize = 10;

/// The files of a GitHub step, as its runner's variables name them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct GitHubFiles {
    pub(crate) output: Option<PathBuf>,
    pub(crate) summary: Option<PathBuf>,
}

/// Collects a run's attempts and writes its outcome for later steps when it ends.
pub(crate) struct StepOutputs {
    /// `$GITHUB_OUTPUT`, then `$GITHUB_STEP_SUMMARY`, each checked.
    github: [Option<ReportTarget>; 2],
    /// The dotenv `--report` files.
    dotenv: Vec<ReportTarget>,
    /// The command line, as the CI log shows it.
    command: String,
    rows: FirstAndLast<Row>,
}

/// One attempt in the summary's table.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    attempt: String,
    ended: String,
    took: String,
    then: String,
}

impl StepOutputs {
    /// Outputs of a run of `command` (shown as the CI log shows it) to GitHub's `github` files,
    /// each checked and opened now, and to `dotenv`; the error says which file cannot be used.
    pub(crate) fn new(
        github: &GitHubFiles,
        dotenv: Vec<ReportTarget>,
        command: String,
    ) -> Result<Self, Refused> {
        let target = |path: &Option<PathBuf>, variable: crate::environment::Variable| {
            path.as_deref()
                .map(|path| ReportTarget::append(path, variable.name))
                .transpose()
        };
        Ok(StepOutputs {
            github: [
                target(&github.output, GITHUB_OUTPUT)?,
                target(&github.summary, GITHUB_STEP_SUMMARY)?,
            ],
            dotenv,
            command,
            rows: FirstAndLast::new(ROWS_AT_EACH_END),
        })
    }

    /// Whether there is anything to write.
    pub(crate) fn any(&self) -> bool {
        !self.dotenv.is_empty() || self.github.iter().any(Option::is_some)
    }

    /// The Markdown summary of the run that ended as `end`.
    fn summary(&self, end: &RunEnd) -> String {
        let attempts = match end.attempts {
            1 => "1 attempt".to_string(),
            n => format!("{n} attempts"),
        };
        let heading = match &end.reason {
            Reason::Success if end.report_error.is_none() => format!("succeeded after {attempts}"),
            Reason::Interrupted(signal, _) => {
                format!("stopped by {} after {attempts}", signal.name())
            }
            _ => format!("gave up after {attempts}"),
        };
        let mut text = format!("### retry: {heading}\n\n{}\n\n", code_span(&self.command));
        for line in text::lines(&Event::Done(end.clone()), false, text::Told::Anew) {
            text.push_str(&format!("> {}\n\n", markdown_text(&line)));
        }
        text.push_str("| Attempt | Ended | Took | Then |\n| ---: | --- | ---: | --- |\n");
        let omitted = (self.rows.omitted() > 0).then(|| Row {
            attempt: "…".into(),
            ended: format!("{} attempts not shown", self.rows.omitted()),
            took: String::new(),
            then: String::new(),
        });
        for row in self.rows.first().chain(&omitted).chain(self.rows.last()) {
            let Row {
                attempt,
                ended,
                took,
                then,
            } = row;
            text.push_str(&format!("| {attempt} | {ended} | {took} | {then} |\n"));
        }
        text.push('\n');
        text
    }
}

impl EndFile for StepOutputs {
    /// Write every output of the run that ended as `end`; the first failure is returned, after
    /// the others were still tried.
    fn write(
        mut self: Box<Self>,
        end: &RunEnd,
        watch: &SignalWatch,
        deadline: Option<Instant>,
    ) -> Result<(), ReportError> {
        let mut first_error = None;
        let text = values_text(end, |name| format!("RETRY_RUN_{}", name.to_uppercase()));
        for target in std::mem::take(&mut self.dotenv) {
            if let Err(error) = target.write(text.clone().into_bytes(), watch, deadline) {
                first_error.get_or_insert(error);
            }
        }
        let [output, summary] = std::mem::take(&mut self.github);
        let texts = [values_text(end, str::to_string), self.summary(end)];
        for (target, text) in [output, summary].into_iter().zip(texts) {
            if let Some(target) = target
                && let Err(error) = target.write(text.into_bytes(), watch, deadline)
            {
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

impl EventSink for StepOutputs {
    fn emit(&mut self, event: &Event) {
        if let Event::AttemptEnd(outcome) = event {
            self.rows.push(Row::of(outcome));
        }
    }
}

impl Row {
    fn of(outcome: &AttemptOutcome) -> Row {
        let termination = outcome.termination;
        let ended = match termination {
            _ if outcome.unready => format!(
                "exit status {} {}",
                termination.status(),
                outcome
                    .unready_by()
                    .map(|rule| rule.unready())
                    .unwrap_or_default()
            ),
            Termination::Exited(code) => format!("exit status {code}"),
            Termination::Signaled(signal) => format!("died of {}", signal.name()),
            Termination::TimedOut {
                limit: TimeLimit::Attempt,
                ..
            } => "timed out".into(),
            Termination::TimedOut {
                limit: TimeLimit::Deadline,
                ..
            } => "stopped at --max-time".into(),
        };
        let then = match &outcome.next {
            Next::Retry { wait, .. } => format!("retried after {}", format_duration(*wait)),
            Next::Stop(Reason::Success) => "succeeded".into(),
            Next::Stop(reason) => format!("stopped ({})", reason.name()),
        };
        Row {
            attempt: outcome.numbering.to_string(),
            ended,
            took: format_duration(outcome.duration),
            then,
        }
    }
}

/// The run's outcome values, one `name=value` line each, each name as `named` makes it.
fn values_text(end: &RunEnd, named: impl Fn(&str) -> String) -> String {
    outcome_values(end)
        .iter()
        .map(|(name, value)| format!("{}={value}\n", named(name)))
        .collect()
}

/// `text` as Markdown that shows it as it is: one line, with no markup or HTML.
fn markdown_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in printable(text).chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '!' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// `text` as a Markdown code span on one line, fenced with more backticks than it holds in a row.
fn code_span(text: &str) -> String {
    let text = printable(text);
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    format!("{fence} {text} {fence}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use retry_policy::attempts::{AttemptLimit, Numbering};
    use retry_policy::matching::OutputMatch;
    use retry_policy::outcome::WaitCause;
    use std::time::Duration;

    fn outcome(attempt: u64, code: u8, next: Next) -> AttemptOutcome {
        AttemptOutcome {
            numbering: Numbering {
                attempt,
                since_reset: attempt,
                limit: AttemptLimit::AtMost(std::num::NonZeroU64::new(30).unwrap()),
                depth: 1,
            },
            termination: Termination::Exited(code),
            duration: Duration::from_millis(5),
            matched: OutputMatch::default(),
            reset: false,
            requested: None,
            rule: Default::default(),
            unready: false,
            next,
        }
    }

    fn end(attempts: u64, reason: Reason) -> RunEnd {
        RunEnd {
            attempts,
            last: Some(Termination::Exited(22)),
            last_unready: None,
            reason,
            elapsed: Duration::from_millis(2250),
            report_error: None,
            flaky_exit: None,
        }
    }

    #[test]
    fn the_values_for_github_and_for_a_dotenv_file() {
        let end = end(3, Reason::Exhausted);
        assert_eq!(
            values_text(&end, str::to_string),
            "attempts=3\nexit_code=22\noutcome=failure\nreason=exhausted\nelapsed_seconds=2.250\n"
        );
        assert_eq!(
            values_text(&end, |name| format!("RETRY_RUN_{}", name.to_uppercase())),
            "RETRY_RUN_ATTEMPTS=3\nRETRY_RUN_EXIT_CODE=22\nRETRY_RUN_OUTCOME=failure\n\
             RETRY_RUN_REASON=exhausted\nRETRY_RUN_ELAPSED_SECONDS=2.250\n"
        );
    }

    #[test]
    fn the_summary_is_a_table_of_the_attempts() {
        let command = "curl -fsS 'http://h/a|b'".to_string();
        let mut outputs = StepOutputs::new(&GitHubFiles::default(), Vec::new(), command).unwrap();
        let retry = Next::Retry {
            wait: Duration::from_secs(1),
            cause: WaitCause::Backoff,
        };
        outputs.emit(&Event::AttemptEnd(outcome(1, 22, retry)));
        outputs.emit(&Event::AttemptEnd(outcome(
            2,
            22,
            Next::Stop(Reason::Exhausted),
        )));
        assert_eq!(
            outputs.summary(&end(2, Reason::Exhausted)),
            "### retry: gave up after 2 attempts\n\n\
             ` curl -fsS 'http://h/a|b' `\n\n\
             > retry: giving up after 2 attempts, all failed; the last failed with exit status 22\n\n\
             | Attempt | Ended | Took | Then |\n\
             | ---: | --- | ---: | --- |\n\
             | 1/30 | exit status 22 | 5ms | retried after 1s |\n\
             | 2/30 | exit status 22 | 5ms | stopped (exhausted) |\n\n"
        );
    }

    #[test]
    fn a_long_run_shows_its_first_and_last_attempts() {
        let mut outputs =
            StepOutputs::new(&GitHubFiles::default(), Vec::new(), "x".into()).unwrap();
        for attempt in 1..=25 {
            outputs.emit(&Event::AttemptEnd(outcome(
                attempt,
                1,
                Next::Stop(Reason::Exhausted),
            )));
        }
        let summary = outputs.summary(&end(25, Reason::Exhausted));
        let rows: Vec<&str> = summary
            .lines()
            .filter(|line| line.starts_with("| "))
            .collect();
        assert_eq!(rows.len(), 2 + 10 + 1 + 10);
        assert_eq!(rows[12], "| … | 5 attempts not shown |  |  |");
        assert!(rows[13].starts_with("| 16/30 |"), "{}", rows[13]);
    }

    #[test]
    fn text_from_outside_shows_as_it_is() {
        assert_eq!(code_span("a ``b`` c"), "``` a ``b`` c ```");
        assert_eq!(
            markdown_text("<img src=x> [a](b) | *c*\n"),
            "&lt;img src=x&gt; \\[a\\](b) \\| \\*c\\*\\\\n"
        );
    }
}
