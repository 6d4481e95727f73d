//! The one path of the tool's own messages to stderr: every event, warning and error goes
//! through here, in text or JSON, honouring `-q`; in a CI system, with that system's lines
//! (groups, annotations) around them; with `--hold all`, into the run's transcript
//! until the run is over.
//!
//! Write errors (a closed stderr) are ignored: reporting must never end or change a run. In the
//! binary the lines go to an [`Outlet`], so that a reader that stops reading cannot hold the run.
//!
//! A CI system's markers (`::endgroup::`, `--- `, a section's end) act only at the start of a
//! line, and the command's output, on the same log, may end without a line feed (`curl` printing
//! a JSON body): so a marker that follows anything but the tool's own line starts with a line
//! feed of its own.

use std::io::{self, Write};
use std::time::Instant;

use crate::output::transcript::Transcript;
use crate::report::ci::log::CiLog;
use crate::report::json;
use crate::report::outlet::Outlet;
use crate::report::text;
use crate::report::verbosity::{LogFormat, LogSettings, Verbosity};
use retry_policy::events::{Event, EventSink};
use retry_policy::outcome::Reason;
use retry_policy::printable::printable;
use retry_process::signals::{Signal, SignalWatch};

/// Renders events on a writer (stderr in the binary) in the configured format.
pub(crate) struct Reporter<W: Write> {
    out: W,
    settings: LogSettings,
    /// The CI system's lines, when the run is in one (and the format is text).
    ci: Option<CiLog>,
    /// Where the lines go instead of `out` while the run is held (`--hold all`).
    held: Option<Transcript>,
    /// The warnings said while the run was held, each once: said again if the transcript is
    /// not written (a run that succeeds), so that no warning is ever swallowed.
    held_warnings: Vec<String>,
    /// The log's current line may hold something that is not the tool's: an attempt or a hook
    /// has run since the tool's last line.
    line_started: bool,
}

impl<W: Write> Reporter<W> {
    /// A reporter writing to `out`.
    pub(crate) fn new(out: W, settings: LogSettings) -> Self {
        Reporter {
            out,
            settings,
            ci: None,
            held: None,
            held_warnings: Vec::new(),
            line_started: false,
        }
    }

    /// The reporter, adding `ci`'s lines to its own.
    pub(crate) fn with_ci(self, ci: Option<CiLog>) -> Self {
        Reporter { ci, ..self }
    }

    /// Keep every line in `transcript` instead of writing it, until [`Reporter::stop_holding`].
    pub(crate) fn hold_in(&mut self, transcript: Transcript) {
        self.held = Some(transcript);
    }

    /// Write lines again, rather than keep them; when the transcript is not `written` (the run
    /// succeeded), say the warnings it held, each once.
    pub(crate) fn stop_holding(&mut self, written: bool) {
        self.held = None;
        if !written {
            for message in std::mem::take(&mut self.held_warnings) {
                self.emit(&Event::Warning(message));
            }
        }
    }

    /// Write one of the tool's own lines, made printable (and safe for the CI system's log).
    fn write_line(&mut self, line: &str) {
        let line = printable(line);
        let line = match &self.ci {
            Some(ci) => ci.neutralise(line),
            None => line,
        };
        self.write_raw(line);
    }

    /// Write `line` as it is: one write per line, so that a line is not split by the command's
    /// own output.
    fn write_raw(&mut self, mut line: String) {
        line.push('\n');
        self.line_started = false;
        match &self.held {
            Some(transcript) => transcript.keep_line(line.as_bytes()),
            None => {
                let _ = self.out.write_all(line.as_bytes());
            }
        }
    }

    /// The CI system's lines for `event`, before or after the reporter's own.
    fn ci_lines(&mut self, event: &Event, before: bool) {
        let Some(ci) = &mut self.ci else { return };
        let lines = match before {
            true => ci.before(event),
            false => ci.after(event),
        };
        let opens_a_group = before && matches!(event, Event::AttemptStart { .. });
        for line in lines {
            let line = match self.line_started {
                true => format!("\n{line}"),
                false => line,
            };
            self.write_raw(line);
        }
        if opens_a_group {
            // The group must be open before the attempt writes into it.
            let _ = self.out.flush();
        }
    }
}

impl Reporter<Outlet> {
    /// The reporter on stderr, through an outlet that the run never waits for.
    pub(crate) fn on_stderr(settings: LogSettings) -> Self {
        let notice = match settings.format {
            LogFormat::Text => |dropped| dropped_notice(LogFormat::Text, dropped),
            LogFormat::Json => |dropped| dropped_notice(LogFormat::Json, dropped),
        };
        Reporter::new(Outlet::stderr(notice), settings)
    }

    /// Wait for the lines still queued to be written, as [`Outlet::finish`] says.
    pub(crate) fn finish(
        &self,
        watch: &SignalWatch,
        deadline: Option<Instant>,
        interrupted: bool,
    ) -> Option<Signal> {
        self.out.finish(watch, deadline, interrupted)
    }
}

/// The warning that `dropped` messages were not written, in `format`.
fn dropped_notice(format: LogFormat, dropped: u64) -> Vec<u8> {
    let message = format!(
        "{dropped} of retry's own messages were not written: the reader of its stderr was not \
         reading"
    );
    let settings = LogSettings {
        format,
        verbosity: Verbosity::Normal,
        run_id: None,
    };
    let mut reporter = Reporter::new(Vec::new(), settings);
    reporter.emit(&Event::Warning(message));
    reporter.out
}

impl<W: Write> EventSink for Reporter<W> {
    fn emit(&mut self, event: &Event) {
        if let (Some(_), Event::Warning(message)) = (&self.held, event)
            && !self.held_warnings.contains(message)
        {
            self.held_warnings.push(message.clone());
        }
        // A hook has just run, and may have written on the log.
        if matches!(event, Event::HookEnd(_)) {
            self.line_started = true;
        }
        self.ci_lines(event, true);
        self.say(event);
        self.ci_lines(event, false);
        // An attempt runs next, and may write on the log.
        if matches!(event, Event::AttemptStart { .. }) {
            self.line_started = true;
        }
    }
}

impl<W: Write> Reporter<W> {
    /// The reporter's own lines for `event`.
    fn say(&mut self, event: &Event) {
        // A command that cannot start, and output the tool could not keep, are failures to fix,
        // so they are said even under --quiet.
        let failure = match event {
            Event::Done(end) => {
                matches!(end.reason, Reason::SpawnFailed(..) | Reason::OutputLost(_))
            }
            Event::Failed(_) => true,
            _ => false,
        };
        if self.settings.verbosity == Verbosity::Quiet && !failure {
            return;
        }
        match self.settings.format {
            LogFormat::Text => {
                let verbose = self.settings.verbosity == Verbosity::Verbose;
                // A held run's transcript says each failed attempt above its output.
                let told = match self.held {
                    Some(_) => text::Told::AboveItsOutput,
                    None => text::Told::Anew,
                };
                for line in text::lines(event, verbose, told) {
                    self.write_line(&line);
                }
            }
            LogFormat::Json => {
                for object in json::objects(event, self.settings.run_id) {
                    let line = serde_json::to_string(&object).expect("an event serialises");
                    self.write_line(&line);
                }
            }
        }
    }
}

/// Say that the tool itself failed before any attempt, in `format`: one line on stderr,
/// `retry: ` and the message, or in JSON an `error` event and the `done` event.
pub(crate) fn say_failure(message: &str, format: LogFormat) {
    let settings = LogSettings {
        format,
        verbosity: Verbosity::Normal,
        run_id: None,
    };
    Reporter::new(io::stderr(), settings).emit(&Event::Failed(message.to_string()));
}

#[cfg(test)]
mod tests {
    use super::*;
    use retry_policy::attempts::Numbering;
    use retry_policy::deadline::DeadlineSource;
    use retry_policy::matching::OutputMatch;
    use retry_policy::outcome::{
        AttemptOutcome, Hook, HookEnd, HookOutcome, Moment, Next, RunEnd, WaitCause,
    };
    use retry_policy::rules::RuleRef;
    use retry_policy::termination::{Termination, TimeLimit};
    use retry_process::signals::Signal;
    use serde_json::Value;
    use std::time::Duration;

    fn render(settings: LogSettings, events: &[Event]) -> String {
        let mut reporter = Reporter::new(Vec::new(), settings);
        events.iter().for_each(|event| reporter.emit(event));
        String::from_utf8(reporter.out).unwrap()
    }

    fn settings(format: LogFormat, verbosity: Verbosity) -> LogSettings {
        LogSettings {
            format,
            verbosity,
            run_id: None,
        }
    }

    fn numbering(attempt: u64) -> Numbering {
        Numbering {
            attempt,
            since_reset: attempt,
            limit: "3".parse().unwrap(),
            depth: 1,
        }
    }

    fn end(attempt: u64, termination: Termination, next: Next) -> AttemptOutcome {
        AttemptOutcome {
            numbering: numbering(attempt),
            termination,
            duration: Duration::from_millis(12),
            matched: OutputMatch::default(),
            reset: false,
            requested: None,
            rule: Default::default(),
            unready: false,
            next,
        }
    }

    fn retry_in(millis: u64) -> Next {
        Next::Retry {
            wait: Duration::from_millis(millis),
            cause: WaitCause::Backoff,
        }
    }

    fn failed_then_gave_up() -> Vec<Event> {
        let start = |attempt| Event::AttemptStart {
            numbering: numbering(attempt),
            at: Duration::ZERO,
        };
        let refused = Reason::NotRetryable(RuleRef {
            described: "--stop-on 7".into(),
            pattern: None,
            default: false,
            spent: None,
        });
        vec![
            start(1),
            Event::AttemptEnd(end(1, Termination::Exited(7), retry_in(1500))),
            start(2),
            Event::AttemptEnd(end(2, Termination::Exited(7), Next::Stop(refused.clone()))),
            Event::Done(RunEnd {
                attempts: 2,
                last: Some(Termination::Exited(7)),
                last_unready: None,
                reason: refused,
                elapsed: Duration::from_millis(1530),
                report_error: None,
                flaky_exit: None,
            }),
        ]
    }

    fn text_of(outcome: AttemptOutcome) -> String {
        render(
            settings(LogFormat::Text, Verbosity::Normal),
            &[Event::AttemptEnd(outcome)],
        )
    }

    #[test]
    fn text_says_one_line_per_retry_and_one_when_giving_up() {
        let text = render(
            settings(LogFormat::Text, Verbosity::Normal),
            &failed_then_gave_up(),
        );
        assert_eq!(
            text,
            "retry: attempt 1/3 failed with exit status 7; retrying in 1.5s\n\
             retry: giving up after 2 attempts: exit status 7 is not retried: --stop-on 7\n"
        );
    }

    #[test]
    fn a_wait_that_ended_past_the_deadline_is_said_with_how_late() {
        let done = |attempts, last| {
            Event::Done(RunEnd {
                attempts,
                last,
                last_unready: None,
                reason: Reason::WokeLate(Duration::from_millis(1500), DeadlineSource::MaxTime),
                elapsed: Duration::from_secs(5),
                report_error: None,
                flaky_exit: None,
            })
        };
        let text = |event| render(settings(LogFormat::Text, Verbosity::Normal), &[event]);
        assert_eq!(
            text(done(1, Some(Termination::Exited(3)))),
            "retry: giving up after 1 attempt: the wait ended 1.5s past the --max-time deadline \
             (the tool was stopped meanwhile, or the machine was busy); the last failed with exit \
             status 3\n"
        );
        assert_eq!(
            text(done(0, None)),
            "retry: giving up before any attempt: --splay ended 1.5s past the --max-time \
             deadline (the tool was stopped meanwhile, or the machine was busy)\n"
        );
    }

    #[test]
    fn a_deadline_is_named_by_where_it_came_from() {
        let done = |attempts, last, reason| {
            Event::Done(RunEnd {
                attempts,
                last,
                last_unready: None,
                reason,
                elapsed: Duration::ZERO,
                report_error: None,
                flaky_exit: None,
            })
        };
        let text = |event| render(settings(LogFormat::Text, Verbosity::Normal), &[event]);
        assert_eq!(
            text(done(0, None, Reason::Deadline(DeadlineSource::OuterRun))),
            "retry: giving up before any attempt: the outer retry's deadline (RETRY_DEADLINE) \
             had passed before the run started (status 124)\n"
        );
        let cut = Termination::TimedOut {
            limit: TimeLimit::Deadline,
            signal: None,
        };
        assert_eq!(
            text(done(
                2,
                Some(cut),
                Reason::Deadline(DeadlineSource::GitlabJob)
            )),
            "retry: giving up after 2 attempts: the GitLab job's time limit (CI_JOB_TIMEOUT from \
             CI_JOB_STARTED_AT) leaves no time for another; the last was stopped at the run's \
             deadline (status 124)\n"
        );
    }

    #[test]
    fn text_describes_signals_timeouts_and_deadlines() {
        let cases = [
            (
                Termination::Signaled(Signal::KILL),
                "attempt 2/3 died of SIGKILL (status 137)",
            ),
            (
                Termination::TimedOut {
                    limit: TimeLimit::Attempt,
                    signal: Some(Signal::TERM),
                },
                "attempt 2/3 timed out after 12ms (status 124)",
            ),
            (
                Termination::TimedOut {
                    limit: TimeLimit::Deadline,
                    signal: None,
                },
                "attempt 2/3 was stopped at the run's deadline (status 124)",
            ),
        ];
        for (termination, text) in cases {
            assert_eq!(
                text_of(end(2, termination, retry_in(0))),
                format!("retry: {text}; retrying in 0s\n")
            );
        }
    }

    #[test]
    fn text_tells_when_the_backoff_starts_over_or_waits_for_the_budget() {
        let mut long = end(7, Termination::Exited(1), retry_in(1000));
        long.reset = true;
        long.numbering.since_reset = 0;
        assert_eq!(
            text_of(long),
            "retry: attempt 7 (0/3 since the backoff started over) failed with exit status 1 \
             after running 12ms, so the backoff starts over; retrying in 1s\n"
        );
        let budget = Next::Retry {
            wait: Duration::from_secs(30),
            cause: WaitCause::Budget,
        };
        assert!(
            text_of(end(1, Termination::Exited(1), budget))
                .ends_with("retrying in 30s, when the retry budget has a token\n")
        );
    }

    #[test]
    fn interrupted_runs_say_where_the_signal_caught_them() {
        let done = |moment| {
            let end = RunEnd {
                attempts: 1,
                last: Some(Termination::Exited(0)),
                last_unready: None,
                reason: Reason::Interrupted(Signal::TERM, moment),
                elapsed: Duration::ZERO,
                report_error: None,
                flaky_exit: None,
            };
            render(
                settings(LogFormat::Text, Verbosity::Normal),
                &[Event::Done(end)],
            )
        };
        assert_eq!(
            done(Moment::Attempt),
            "retry: stopped by SIGTERM after 1 attempt; passed it on to the command\n"
        );
        assert_eq!(
            done(Moment::Wait),
            "retry: stopped by SIGTERM after 1 attempt, while waiting to retry\n"
        );
        assert_eq!(
            done(Moment::Hook(Hook::OnGiveUp)),
            "retry: stopped by SIGTERM after 1 attempt, while running --on-give-up; passed it on \
             to it\n"
        );
        assert_eq!(
            done(Moment::Job),
            "retry: stopped by SIGTERM after 1 attempt, while waiting for its job's turn (another \
             run of the job, or the store that keeps its terms)\n"
        );
        assert_eq!(
            done(Moment::History),
            "retry: stopped by SIGTERM after 1 attempt, while keeping its job's history\n"
        );
    }

    /// What the end of `--on-retry` with `outcome`, during which `interrupted_by` arrived, says
    /// in text and in JSON.
    fn hook_said(outcome: HookOutcome, interrupted_by: Option<Signal>) -> (String, String) {
        let end = HookEnd {
            hook: Hook::OnRetry,
            outcome,
            duration: Duration::from_millis(7),
            interrupted_by,
        };
        let said = |format| {
            let events = [Event::HookEnd(end.clone())];
            render(settings(format, Verbosity::Normal), &events)
        };
        (said(LogFormat::Text), said(LogFormat::Json))
    }

    #[test]
    fn a_hook_is_a_warning_in_text_only_when_it_did_not_succeed() {
        let hook = |outcome| hook_said(outcome, None);
        let (text, json) = hook(HookOutcome::Ended(Termination::Exited(0)));
        assert_eq!(text, "");
        assert_eq!(
            json,
            "{\"event\":\"hook_end\",\"hook\":\"on_retry\",\"status\":0,\"duration_ms\":7.0}\n"
        );
        let (text, _) = hook(HookOutcome::Ended(Termination::Exited(3)));
        assert_eq!(
            text,
            "retry: warning: --on-retry failed with exit status 3; the run goes on as it would \
             without it\n"
        );
        let not_run = HookOutcome::NotRun {
            status: 124,
            why: "--max-time left no time to run it".into(),
        };
        let (text, json) = hook(not_run);
        assert!(
            text.contains("--on-retry did not run: --max-time left no time"),
            "{text}"
        );
        assert!(json.contains("\"status\":124"), "{json}");
    }

    #[test]
    fn a_hook_the_run_was_stopped_during_is_never_said_to_let_it_go_on() {
        let text = |outcome| hook_said(outcome, Some(Signal::TERM)).0;
        // Dead of the signal passed on to it: the run's last line says so.
        assert_eq!(
            text(HookOutcome::Ended(Termination::Signaled(Signal::TERM))),
            ""
        );
        assert_eq!(
            text(HookOutcome::Ended(Termination::Exited(3))),
            "retry: warning: --on-retry failed with exit status 3\n"
        );
    }

    #[test]
    fn verbose_text_adds_attempt_starts() {
        let text = render(
            settings(LogFormat::Text, Verbosity::Verbose),
            &failed_then_gave_up(),
        );
        assert!(text.starts_with("retry: attempt 1/3 starting\n"), "{text}");
        assert_eq!(text.lines().count(), 4, "{text}");
    }

    #[test]
    fn quiet_says_nothing_but_failures_to_fix() {
        for format in [LogFormat::Text, LogFormat::Json] {
            let quiet = settings(format, Verbosity::Quiet);
            assert_eq!(render(quiet, &failed_then_gave_up()), "");
            let not_found = RunEnd {
                attempts: 1,
                last: None,
                last_unready: None,
                reason: Reason::SpawnFailed(
                    retry_policy::outcome::SpawnFailure::NotFound,
                    "command not found: x".into(),
                ),
                elapsed: Duration::ZERO,
                report_error: None,
                flaky_exit: None,
            };
            let said = render(quiet, &[Event::Done(not_found)]);
            assert!(said.contains("command not found: x"), "{said}");
        }
    }

    #[test]
    fn json_writes_one_object_per_event_and_the_wait_after_a_retry() {
        let text = render(
            settings(LogFormat::Json, Verbosity::Normal),
            &failed_then_gave_up(),
        );
        let objects: Vec<Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        let names: Vec<&str> = objects
            .iter()
            .map(|o| o["event"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "attempt_start",
                "attempt_end",
                "wait",
                "attempt_start",
                "attempt_end",
                "done"
            ]
        );
        assert_eq!(objects[0]["offset_ms"], 0.0);
        assert_eq!(objects[1]["verdict"], "retry");
        assert_eq!(objects[1]["duration_ms"], 12.0);
        assert_eq!(objects[1]["timed_out"], false);
        assert_eq!(objects[1]["pattern"], Value::Null);
        assert_eq!(objects[2]["wait_ms"], 1500.0);
        assert_eq!(objects[2]["before_attempt"], 2);
        assert_eq!(objects[5]["reason"], "not_retryable");
        assert_eq!(objects[5]["status"], 7);
    }

    #[test]
    fn json_names_the_rule_that_decided() {
        let mut decided = end(1, Termination::Exited(22), Next::Stop(Reason::Exhausted));
        decided.rule = RuleRef {
            described: "--stop-on stderr:404".into(),
            pattern: Some("404".into()),
            default: false,
            spent: None,
        };
        let text = render(
            settings(LogFormat::Json, Verbosity::Normal),
            &[Event::AttemptEnd(decided)],
        );
        let object: Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(
            (object["rule"].as_str(), object["pattern"].as_str()),
            (Some("--stop-on stderr:404"), Some("404"))
        );
    }
}
