//! The lines a run adds to a CI system's log, in that system's syntax: a collapsible group
//! around each attempt's output, a warning when the run succeeded only after retries and an
//! error when it gave up, and (on Azure) the run's outcome as variables for later steps.
//!
//! Every piece of text that came from outside (the command line, a message quoting it) goes
//! through [`CiLog::data`], the one place that makes it safe for the system: its control
//! characters (a line feed, ESC, an OSC sequence, BEL) are shown escaped, as in every line of the
//! tool's, and then the system's own escapes apply (GitHub's `%25`, Azure's `%AZP25`; the only
//! properties the tool writes are its own words), so that no command can forge a workflow command
//! or drive the log viewer through the tool's lines. The Azure agent acts on `##vso[` anywhere in
//! a line, so on Azure every line of the tool's has it broken as the agent's own tasks do
//! (`**vso[`). GitLab and Buildkite act only on markers that need an escape character or a
//! line's start, which the tool's lines never give away: each starts with the tool's own text.
//!
//! These lines are markers only at the start of a line; the reporter starts each on a line of
//! its own when the command may have left one unfinished (see `reporter`).

use std::time::{SystemTime, UNIX_EPOCH};

use crate::report::ci::CiSystem;
use crate::report::text;
use retry_policy::events::Event;
use retry_policy::outcome::{AttemptOutcome, Next, Reason, RunEnd};
use retry_policy::printable::printable;

/// The most characters of the command line a title or an annotation shows.
const COMMAND_SHOWN: usize = 200;

/// The CI lines of one run.
pub(crate) struct CiLog {
    system: CiSystem,
    /// The command line, quoted as a shell would take it, and cut to [`COMMAND_SHOWN`].
    command: String,
    /// `--job`, which starts each group's title, when given.
    job: Option<String>,
    /// The start of each GitLab section's name, unique to this run.
    section: String,
    /// The wall clock, in seconds since the epoch, for GitLab's section markers.
    clock: fn() -> u64,
    /// How the last failed attempt ended, in words, for the warning after a late success.
    last_failure: Option<String>,
}

impl CiLog {
    /// The lines of a run of `command` (its words) in `system`'s log.
    pub(crate) fn new(system: CiSystem, command: &[String]) -> Self {
        CiLog {
            system,
            command: shown_command(command),
            job: None,
            section: format!("retry_{}_attempt", std::process::id()),
            clock: unix_seconds,
            last_failure: None,
        }
    }

    /// The same lines, each group's title starting with the job's name `job` (`--job`).
    pub(crate) fn for_job(self, job: Option<&str>) -> Self {
        CiLog {
            job: job.map(str::to_string),
            ..self
        }
    }

    /// The lines that go before the reporter's own for `event`.
    pub(crate) fn before(&mut self, event: &Event) -> Vec<String> {
        match event {
            Event::AttemptStart { numbering, .. } => {
                let title = match &self.job {
                    Some(job) => format!("{job}: attempt {numbering}: {}", self.command),
                    None => format!("attempt {numbering}: {}", self.command),
                };
                vec![self.open_group(numbering.attempt, &title)]
            }
            Event::AttemptEnd(outcome) => {
                if outcome.next != Next::Stop(Reason::Success) {
                    self.last_failure = Some(text::describe(outcome));
                }
                self.close_group(outcome).into_iter().collect()
            }
            _ => Vec::new(),
        }
    }

    /// The lines that go after the reporter's own for `event`.
    pub(crate) fn after(&mut self, event: &Event) -> Vec<String> {
        let Event::Done(end) = event else {
            return Vec::new();
        };
        let mut lines: Vec<String> = self.annotation(end).into_iter().collect();
        if self.system == CiSystem::Azure {
            lines.extend(outcome_values(end).iter().map(|(name, value)| {
                format!("##vso[task.setvariable variable={name};isoutput=true]{value}")
            }));
        }
        lines
    }

    /// `line`, one of the tool's own, made safe for this system's log.
    pub(crate) fn neutralise(&self, line: String) -> String {
        match self.system {
            CiSystem::Azure => break_azure_prefix(&line),
            _ => line,
        }
    }

    /// `text`, which came from outside, made safe for this system's log: control characters
    /// escaped, then the system's own escapes.
    fn data(&self, text: &str) -> String {
        let text = printable(text);
        match self.system {
            CiSystem::GitHub => text.replace('%', "%25"),
            CiSystem::Azure => break_azure_prefix(&text.replace('%', "%AZP25")),
            CiSystem::GitLab | CiSystem::Buildkite => text,
        }
    }

    fn open_group(&self, attempt: u64, title: &str) -> String {
        let title = self.data(title);
        match self.system {
            CiSystem::GitHub => format!("::group::{title}"),
            CiSystem::GitLab => format!(
                "\x1b[0Ksection_start:{}:{}_{attempt}[collapsed=true]\r\x1b[0K{title}",
                (self.clock)(),
                self.section,
            ),
            CiSystem::Buildkite => format!("--- {title}"),
            CiSystem::Azure => format!("##[group]{title}"),
        }
    }

    /// The line that ends the group of the attempt `outcome` tells of; on Buildkite, whose
    /// sections end only where the next begins, the line that opens it when it failed the run.
    fn close_group(&self, outcome: &AttemptOutcome) -> Option<String> {
        let attempt = outcome.numbering.attempt;
        match self.system {
            CiSystem::GitHub => Some("::endgroup::".into()),
            CiSystem::GitLab => Some(format!(
                "\x1b[0Ksection_end:{}:{}_{attempt}\r\x1b[0K",
                (self.clock)(),
                self.section
            )),
            CiSystem::Buildkite => match &outcome.next {
                Next::Stop(reason) if reason.gives_up() => Some("^^^ +++".into()),
                _ => None,
            },
            CiSystem::Azure => Some("##[endgroup]".into()),
        }
    }

    /// A warning for a success that needed retries, an error for a run that gave up; none for a
    /// first-time success or a run a signal stopped (a cancelled job says so itself).
    fn annotation(&self, end: &RunEnd) -> Option<String> {
        let (level, message) = match &end.reason {
            Reason::Success if end.attempts > 1 => {
                let failure = self
                    .last_failure
                    .as_deref()
                    .unwrap_or("the attempt before failed");
                let message = format!(
                    "{} succeeded only after {} attempts; {failure}",
                    self.command, end.attempts
                );
                match end.flaky_exit {
                    // The pipeline refuses a flaky success: it failed the step.
                    Some(status) => (Level::Error, format!("{message} (--flaky-exit {status})")),
                    None => (Level::Warning, message),
                }
            }
            reason if reason.gives_up() => {
                let why =
                    text::lines(&Event::Done(end.clone()), false, text::Told::Anew).join("; ");
                let why = why.strip_prefix("retry: ").unwrap_or(&why).to_string();
                (Level::Error, format!("{}: {why}", self.command))
            }
            _ => return None,
        };
        Some(self.annotate(level, &message))
    }

    fn annotate(&self, level: Level, message: &str) -> String {
        let name = level.name();
        let message = self.data(message);
        match self.system {
            CiSystem::GitHub => format!("::{name} title=retry::{message}"),
            CiSystem::Azure => format!("##vso[task.logissue type={name}]{message}"),
            CiSystem::GitLab | CiSystem::Buildkite => {
                format!("\x1b[{}mretry: {name}: {message}\x1b[0m", level.colour())
            }
        }
    }
}

#[derive(Clone, Copy)]
enum Level {
    Warning,
    Error,
}

impl Level {
    fn name(self) -> &'static str {
        match self {
            Level::Warning => "warning",
            Level::Error => "error",
        }
    }

    /// Bold yellow or bold red, in the ANSI codes GitLab's and Buildkite's logs show.
    fn colour(self) -> &'static str {
        match self {
            Level::Warning => "33;1",
            Level::Error => "31;1",
        }
    }
}

/// The run's outcome as later steps read it: attempts, exit_code, outcome (success, flaky with
/// `--flaky-exit`, failure or interrupted), reason (as the `done` event's) and elapsed_seconds.
pub(crate) fn outcome_values(end: &RunEnd) -> [(&'static str, String); 5] {
    let outcome = match &end.reason {
        Reason::Success if end.report_error.is_none() && end.flaky_exit.is_some() => "flaky",
        Reason::Success if end.report_error.is_none() => "success",
        Reason::Interrupted(..) => "interrupted",
        _ => "failure",
    };
    [
        ("attempts", end.attempts.to_string()),
        (
            "exit_code",
            retry_policy::exit::Exit::of(end).status().to_string(),
        ),
        ("outcome", outcome.to_string()),
        ("reason", end.reason.name().to_string()),
        (
            "elapsed_seconds",
            format!("{:.3}", end.elapsed.as_secs_f64()),
        ),
    ]
}

/// `words` as one line a shell would take back, cut to [`COMMAND_SHOWN`] characters.
pub(crate) fn shown_command(words: &[String]) -> String {
    let line = words
        .iter()
        .map(|word| shell_quoted(word))
        .collect::<Vec<_>>()
        .join(" ");
    match line.char_indices().nth(COMMAND_SHOWN) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

/// `word` as a shell would take it back: bare when it is plain, else in single quotes.
fn shell_quoted(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c);
    match !word.is_empty() && word.chars().all(plain) {
        true => word.to_string(),
        false => format!("'{}'", word.replace('\'', r"'\''")),
    }
}

/// `line` with every `##vso` (in any case) made `**vso`, as the agent's own tasks neutralise
/// text they echo: the agent acts on `##vso[` anywhere in a line.
fn break_azure_prefix(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.to_ascii_lowercase().find("##vso") {
        out.push_str(&rest[..at]);
        out.push_str("**");
        rest = &rest[at + 2..];
    }
    out.push_str(rest);
    out
}

/// Seconds since the epoch, by the wall clock.
fn unix_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use retry_policy::attempts::{AttemptLimit, Numbering};
    use retry_policy::matching::OutputMatch;
    use retry_policy::termination::Termination;
    use std::time::Duration;

    fn log(system: CiSystem) -> CiLog {
        let mut log = CiLog::new(
            system,
            &["curl".into(), "-fsS".into(), "http://h/a b".into()],
        );
        log.section = "retry_7_attempt".into();
        log.clock = || 1_700_000_000;
        log
    }

    fn numbering(attempt: u64) -> Numbering {
        Numbering {
            attempt,
            since_reset: attempt,
            limit: AttemptLimit::AtMost(std::num::NonZeroU64::new(3).unwrap()),
            depth: 1,
        }
    }

    fn ended(attempt: u64, code: u8, next: Next) -> Event {
        Event::AttemptEnd(AttemptOutcome {
            numbering: numbering(attempt),
            termination: Termination::Exited(code),
            duration: Duration::from_millis(5),
            matched: OutputMatch::default(),
            reset: false,
            requested: None,
            rule: Default::default(),
            unready: false,
            next,
        })
    }

    fn done(attempts: u64, code: u8, reason: Reason) -> Event {
        Event::Done(RunEnd {
            attempts,
            last: Some(Termination::Exited(code)),
            last_unready: None,
            reason,
            elapsed: Duration::from_millis(1500),
            report_error: None,
            flaky_exit: None,
        })
    }

    /// Every line `log` adds for a run of two attempts that ends as `last` and `end` say.
    fn run(mut log: CiLog, last: Event, end: Event) -> Vec<String> {
        let retry = Next::Retry {
            wait: Duration::from_secs(1),
            cause: retry_policy::outcome::WaitCause::Backoff,
        };
        let start = |attempt| Event::AttemptStart {
            numbering: numbering(attempt),
            at: Duration::ZERO,
        };
        let events = [start(1), ended(1, 22, retry), start(2), last, end];
        events
            .iter()
            .flat_map(|event| {
                let mut lines = log.before(event);
                lines.extend(log.after(event));
                lines
            })
            .collect()
    }

    fn late_success(system: CiSystem) -> Vec<String> {
        run(
            log(system),
            ended(2, 0, Next::Stop(Reason::Success)),
            done(2, 0, Reason::Success),
        )
    }

    fn gave_up(system: CiSystem) -> Vec<String> {
        run(
            log(system),
            ended(2, 22, Next::Stop(Reason::Exhausted)),
            done(2, 22, Reason::Exhausted),
        )
    }

    const WARNING: &str = "curl -fsS 'http://h/a b' succeeded only after 2 attempts; attempt 1/3 \
                           failed with exit status 22";
    const ERROR: &str = "curl -fsS 'http://h/a b': giving up after 2 attempts, all failed; the \
                         last failed with exit status 22";

    #[test]
    fn github_groups_and_annotations() {
        assert_eq!(
            late_success(CiSystem::GitHub),
            [
                "::group::attempt 1/3: curl -fsS 'http://h/a b'",
                "::endgroup::",
                "::group::attempt 2/3: curl -fsS 'http://h/a b'",
                "::endgroup::",
                &format!("::warning title=retry::{WARNING}"),
            ]
        );
        assert_eq!(
            gave_up(CiSystem::GitHub).last().unwrap(),
            &format!("::error title=retry::{ERROR}")
        );
    }

    #[test]
    fn gitlab_sections_and_marked_lines() {
        let lines = gave_up(CiSystem::GitLab);
        assert_eq!(
            lines,
            [
                "\x1b[0Ksection_start:1700000000:retry_7_attempt_1[collapsed=true]\r\x1b[0K\
                 attempt 1/3: curl -fsS 'http://h/a b'",
                "\x1b[0Ksection_end:1700000000:retry_7_attempt_1\r\x1b[0K",
                "\x1b[0Ksection_start:1700000000:retry_7_attempt_2[collapsed=true]\r\x1b[0K\
                 attempt 2/3: curl -fsS 'http://h/a b'",
                "\x1b[0Ksection_end:1700000000:retry_7_attempt_2\r\x1b[0K",
                &format!("\x1b[31;1mretry: error: {ERROR}\x1b[0m"),
            ]
        );
        assert_eq!(
            late_success(CiSystem::GitLab).last().unwrap(),
            &format!("\x1b[33;1mretry: warning: {WARNING}\x1b[0m")
        );
    }

    #[test]
    fn buildkite_opens_the_section_of_the_attempt_that_failed_the_run() {
        assert_eq!(
            gave_up(CiSystem::Buildkite),
            [
                "--- attempt 1/3: curl -fsS 'http://h/a b'",
                "--- attempt 2/3: curl -fsS 'http://h/a b'",
                "^^^ +++",
                &format!("\x1b[31;1mretry: error: {ERROR}\x1b[0m"),
            ]
        );
        assert!(!late_success(CiSystem::Buildkite).contains(&"^^^ +++".to_string()));
    }

    #[test]
    fn azure_groups_issues_and_variables() {
        let lines = late_success(CiSystem::Azure);
        assert_eq!(
            lines,
            [
                "##[group]attempt 1/3: curl -fsS 'http://h/a b'",
                "##[endgroup]",
                "##[group]attempt 2/3: curl -fsS 'http://h/a b'",
                "##[endgroup]",
                &format!("##vso[task.logissue type=warning]{WARNING}"),
                "##vso[task.setvariable variable=attempts;isoutput=true]2",
                "##vso[task.setvariable variable=exit_code;isoutput=true]0",
                "##vso[task.setvariable variable=outcome;isoutput=true]success",
                "##vso[task.setvariable variable=reason;isoutput=true]success",
                "##vso[task.setvariable variable=elapsed_seconds;isoutput=true]1.500",
            ]
        );
    }

    #[test]
    fn a_first_time_success_and_a_cancelled_run_are_not_annotated() {
        let mut log = log(CiSystem::GitHub);
        assert!(log.after(&done(1, 0, Reason::Success)).is_empty());
        let cancelled = Reason::Interrupted(
            retry_process::signals::Signal::TERM,
            retry_policy::outcome::Moment::Attempt,
        );
        assert!(log.after(&done(1, 143, cancelled)).is_empty());
    }

    #[test]
    fn text_from_outside_cannot_forge_a_command() {
        let hostile = "x%\r\n::error::forged\n##vso[task.setvariable variable=a]b\x1b]0;t\x07";
        assert_eq!(
            log(CiSystem::GitHub).data(hostile),
            "x%25\\r\\n::error::forged\\n##vso[task.setvariable variable=a]b\\u{1b}]0;t\\u{7}"
        );
        assert_eq!(
            log(CiSystem::Azure).data(hostile),
            "x%AZP25\\r\\n::error::forged\\n**vso[task.setvariable variable=a]b\\u{1b}]0;t\\u{7}"
        );
        assert_eq!(break_azure_prefix("a ##VSO[x] ##vso["), "a **VSO[x] **vso[");
        let words = ["sh".to_string(), "-c".into(), hostile.into()];
        for system in [
            CiSystem::GitHub,
            CiSystem::Azure,
            CiSystem::GitLab,
            CiSystem::Buildkite,
        ] {
            let mut log = CiLog::new(system, &words);
            for line in log.before(&Event::AttemptStart {
                numbering: numbering(1),
                at: Duration::ZERO,
            }) {
                assert!(!line.contains('\n'), "{line:?}");
                if system == CiSystem::Azure {
                    assert!(!line.contains("##vso["), "{line:?}");
                }
                let escapes = line.matches('\r').count();
                assert_eq!(escapes, usize::from(system == CiSystem::GitLab), "{line:?}");
            }
        }
    }

    #[test]
    fn a_long_command_is_cut_and_words_are_quoted() {
        assert_eq!(
            shown_command(&["echo".into(), "it's".into(), String::new()]),
            r"echo 'it'\''s' ''"
        );
        let long = shown_command(&["x".repeat(500)]);
        assert_eq!(long.chars().count(), COMMAND_SHOWN + 1);
        assert!(long.ends_with('…'));
    }
}
