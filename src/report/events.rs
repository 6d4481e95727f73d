//! What a run reports about itself, and how: text lines or JSON objects on stderr.
//!
//! The run loop emits [`Event`]s into an [`EventSink`]; the [`Reporter`] renders them in the chosen
//! [`LogFormat`] and verbosity. Write errors (a closed stderr) are ignored: reporting must never
//! end or change a run. The JSON keys written here are the stable schema in the README.

use std::fmt;
use std::io::Write;
use std::time::Duration;

use serde_json::{json, Value};

use crate::attempts::AttemptLimit;
use crate::cli::LogFormat;
use crate::config::{LogSettings, Verbosity};
use crate::duration::{format_duration, to_millis};
use crate::exit::{self, Exit};
use crate::output::OutputMatch;
use crate::policy::Refusal;
use crate::process::signals;
use crate::process::termination::{Termination, TimeLimit};
use crate::report::message::printable;

/// Something that happened during a run.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// An attempt is about to start.
    AttemptStart {
        /// Which attempt.
        numbering: Numbering,
        /// When, from the start of the run.
        at: Duration,
    },
    /// An attempt ended.
    AttemptEnd(AttemptEnd),
    /// The run waits before the next attempt.
    Wait {
        /// The attempt that follows the wait.
        before_attempt: u64,
        /// How long the run waits.
        wait: Duration,
        /// What set the length of the wait.
        cause: WaitCause,
    },
    /// Something the user should know that changes nothing in the run.
    Warning(String),
    /// The run is over.
    Done(Done),
}

/// What set the length of a wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitCause {
    /// `--splay`, before the first attempt.
    Splay,
    /// The backoff schedule.
    Backoff,
    /// The retry budget had no token sooner.
    Budget,
}

impl WaitCause {
    /// The stable name used in JSON events.
    pub fn name(self) -> &'static str {
        match self {
            WaitCause::Splay => "splay",
            WaitCause::Backoff => "backoff",
            WaitCause::Budget => "budget",
        }
    }
}

/// Which attempt: its number, its number since the backoff last started over, and the limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Numbering {
    /// The attempt's number, from 1, over the whole run.
    pub attempt: u64,
    /// Its number since the last `--reset-after` reset (the same as `attempt` before any).
    pub since_reset: u64,
    /// The attempt limit, which counts from the last reset.
    pub limit: AttemptLimit,
}

impl fmt::Display for Numbering {
    /// "3/5", or "7 (2/5 since the backoff started over)" after a reset.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Numbering {
            attempt,
            since_reset,
            limit,
        } = self;
        match attempt == since_reset {
            true => write!(f, "{attempt}/{limit}"),
            false => write!(
                f,
                "{attempt} ({since_reset}/{limit} since the backoff started over)"
            ),
        }
    }
}

/// The end of one attempt and what the run makes of it.
#[derive(Clone, Debug, PartialEq)]
pub struct AttemptEnd {
    /// Which attempt.
    pub numbering: Numbering,
    /// How the command ended.
    pub termination: Termination,
    /// How long it ran.
    pub duration: Duration,
    /// What the output conditions found in its output.
    pub output: OutputMatch,
    /// Whether it ran long enough (`--reset-after`) to start the backoff over.
    pub reset: bool,
    /// What happens next.
    pub verdict: Verdict,
}

impl AttemptEnd {
    /// The output condition that decided the verdict, and its pattern: a stop match wins.
    pub fn matched(&self) -> Option<(&'static str, &str)> {
        match (&self.output.stop, &self.output.retry) {
            (Some(pattern), _) => Some(("stop_on_output", pattern)),
            (None, Some(pattern)) => Some(("retry_on_output", pattern)),
            (None, None) => None,
        }
    }
}

/// What the run does after an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The attempt succeeded; the run is over.
    Success,
    /// Another attempt follows after a wait.
    Retry,
    /// The run gives up.
    Stop,
}

/// The end of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Done {
    /// The tool's exit status.
    pub status: u8,
    /// The last attempt's status, if an attempt ran (or could not start).
    pub last: Option<u8>,
    /// Why `--report` could not be written, which makes the exit status 125.
    pub report_error: Option<String>,
    /// How many attempts were made (a command that could not start counts as one).
    pub attempts: u64,
    /// Why the run ended.
    pub reason: Reason,
    /// Time from the start of the run to its end.
    pub elapsed: Duration,
}

/// Why a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// An attempt's status was in `--success-on`.
    Success,
    /// Every allowed attempt failed.
    Exhausted,
    /// The last status was one not to retry.
    NotRetryable(Refusal),
    /// The command could not be started; the text says why.
    SpawnFailed(String),
    /// `--max-time` ended the last attempt, or leaves no time for the next wait.
    Deadline,
    /// The tool received this signal at this moment of the run, and stops.
    Interrupted(i32, Moment),
    /// The retry budget has no token before `--max-time`.
    Budget,
    /// Output that the tool could neither keep nor pass on; the text says why.
    OutputLost(String),
}

/// When in a run a signal arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moment {
    /// During `--splay`, before the first attempt.
    Splay,
    /// While an attempt ran (the signal was passed on to it).
    Attempt,
    /// Typed at the terminal the attempt held, killing it; the tool's whole job got it too.
    Keyboard,
    /// While an attempt's held output was written.
    Output,
    /// During a wait between attempts.
    Wait,
    /// While the report was written, at the end.
    Report,
}

impl Reason {
    /// The stable name used in JSON events.
    pub fn name(&self) -> &'static str {
        match self {
            Reason::Success => "success",
            Reason::Exhausted => "exhausted",
            Reason::NotRetryable(_) => "not_retryable",
            Reason::SpawnFailed(_) => "spawn_failed",
            Reason::Deadline => "deadline",
            Reason::Interrupted(..) => "interrupted",
            Reason::Budget => "budget",
            Reason::OutputLost(_) => "output_lost",
        }
    }

    /// The text of what went wrong, for a command that could not start or lost output.
    pub fn error(&self) -> Option<&str> {
        match self {
            Reason::SpawnFailed(error) | Reason::OutputLost(error) => Some(error),
            _ => None,
        }
    }

    /// The tool's exit status for a run that ended for this reason, after an attempt that ended
    /// with `last` (none when no attempt ran). A run that gives up never exits 0: an attempt
    /// whose 0 counted as a failure gives 1.
    pub fn exit_status(&self, last: Option<u8>) -> u8 {
        match self {
            Reason::Success => exit::SUCCESS,
            Reason::Interrupted(signal, _) => exit::signal_status(*signal),
            Reason::OutputLost(_) => exit::USAGE,
            Reason::SpawnFailed(_) => last.unwrap_or(exit::USAGE),
            _ => match last {
                Some(exit::SUCCESS) | None => exit::GAVE_UP_AFTER_ZERO,
                Some(status) => status,
            },
        }
    }
}

impl Done {
    /// How the tool ends after this run: with the status, or by the signal that stopped it.
    pub fn exit(&self) -> Exit {
        match self.reason {
            Reason::Interrupted(signal, _) => Exit::KilledBy(signal),
            _ => Exit::Status(self.status),
        }
    }
}

impl Verdict {
    /// The stable name used in JSON events.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Success => "success",
            Verdict::Retry => "retry",
            Verdict::Stop => "stop",
        }
    }
}

/// Where the run loop sends its events.
pub trait EventSink {
    /// Take note of `event`.
    fn emit(&mut self, event: Event);
}

/// Both sinks get every event.
impl<A: EventSink, B: EventSink> EventSink for (A, B) {
    fn emit(&mut self, event: Event) {
        self.0.emit(event.clone());
        self.1.emit(event);
    }
}

/// A sink borrowed for the run.
impl<S: EventSink> EventSink for &mut S {
    fn emit(&mut self, event: Event) {
        (**self).emit(event);
    }
}

/// A sink that may be absent.
impl<S: EventSink> EventSink for Option<S> {
    fn emit(&mut self, event: Event) {
        if let Some(sink) = self {
            sink.emit(event);
        }
    }
}

/// Renders events on a writer (stderr in the binary) in the configured format.
pub struct Reporter<W: Write> {
    out: W,
    settings: LogSettings,
    /// A failed attempt whose text line waits for the length of the following wait.
    pending_retry: Option<AttemptEnd>,
}

impl<W: Write> Reporter<W> {
    /// A reporter writing to `out`.
    pub fn new(out: W, settings: LogSettings) -> Self {
        Reporter {
            out,
            settings,
            pending_retry: None,
        }
    }

    fn write_line(&mut self, line: &str) {
        // One write per line, so that a line is not split by the command's own output; a closed
        // or full stderr must not end the run, so write errors are dropped.
        let _ = self
            .out
            .write_all(format!("{}\n", printable(line)).as_bytes());
    }

    fn text(&mut self, event: Event) {
        let verbose = self.settings.verbosity == Verbosity::Verbose;
        match event {
            Event::AttemptStart { numbering, .. } if verbose => {
                self.write_line(&format!("retry: attempt {numbering} starting"));
            }
            Event::AttemptEnd(end) if end.verdict == Verdict::Retry => {
                self.pending_retry = Some(end)
            }
            Event::AttemptEnd(end) if end.verdict == Verdict::Success && verbose => {
                let took = format_duration(end.duration);
                self.write_line(&format!(
                    "retry: attempt {} succeeded after {took}",
                    end.numbering
                ));
            }
            Event::Wait { wait, cause, .. } => {
                let wait = format_duration(wait);
                match (self.pending_retry.take(), cause) {
                    (Some(end), WaitCause::Budget) => self.write_line(&format!(
                        "retry: {}; retrying in {wait}, when the retry budget has a token",
                        describe(&end)
                    )),
                    (Some(end), _) => {
                        self.write_line(&format!("retry: {}; retrying in {wait}", describe(&end)))
                    }
                    (None, WaitCause::Splay) if verbose => self.write_line(&format!(
                        "retry: waiting {wait} (--splay) before the first attempt"
                    )),
                    (None, _) => {}
                }
            }
            Event::Done(done) => {
                if let Some(line) = give_up_line(&done) {
                    self.write_line(&line);
                }
                if let Some(error) = &done.report_error {
                    self.write_line(&format!("retry: {error}; so retry exits {}", done.status));
                }
            }
            Event::Warning(message) => self.write_line(&format!("retry: warning: {message}")),
            _ => {}
        }
    }
}

/// What happened to an attempt, in words: "attempt 2/5 died of SIGKILL (status 137)".
fn describe(end: &AttemptEnd) -> String {
    let attempt = format!("attempt {}", end.numbering);
    let status = end.termination.status();
    let what = match end.termination {
        Termination::Exited(code) => format!("{attempt} failed with exit status {code}"),
        Termination::Signaled(signal) => {
            format!(
                "{attempt} died of {} (status {status})",
                signals::name(signal)
            )
        }
        Termination::TimedOut {
            limit: TimeLimit::Attempt,
            ..
        } => {
            let took = format_duration(end.duration);
            format!("{attempt} timed out after {took} (status {status})")
        }
        Termination::TimedOut {
            limit: TimeLimit::Deadline,
            ..
        } => {
            format!("{attempt} was stopped at the --max-time deadline (status {status})")
        }
    };
    match end.reset {
        true => format!(
            "{what} after running {}, so the backoff starts over",
            format_duration(end.duration)
        ),
        false => what,
    }
}

/// The text line for the end of a run, if it is worth one.
fn give_up_line(done: &Done) -> Option<String> {
    let attempts = match done.attempts {
        1 => "1 attempt".to_string(),
        n => format!("{n} attempts"),
    };
    let last = done.last.unwrap_or(done.status);
    let exits = match done.status == last {
        true => String::new(),
        false => format!(", so retry exits {}", done.status),
    };
    Some(match &done.reason {
        Reason::Success => return None,
        Reason::SpawnFailed(error) => format!("retry: {error}"),
        Reason::OutputLost(error) => {
            format!(
                "retry: {error}; stopping after {attempts}, as retry cannot vouch for the output"
            )
        }
        Reason::Exhausted => {
            format!("retry: giving up after {attempts}, all failed; last exit status {last}{exits}")
        }
        Reason::NotRetryable(refusal) => format!(
            "retry: giving up after {attempts}: exit status {last} {}{exits}",
            refusal.explain()
        ),
        Reason::Deadline => format!(
            "retry: giving up after {attempts}: --max-time leaves no time for another; \
             last exit status {last}{exits}"
        ),
        Reason::Budget => format!(
            "retry: giving up after {attempts}: the retry budget has no token before --max-time; \
             last exit status {last}{exits}"
        ),
        Reason::Interrupted(signal, moment) => {
            let signal = signals::name(*signal);
            match moment {
                Moment::Splay => {
                    format!("retry: stopped by {signal} during --splay, before any attempt")
                }
                Moment::Attempt => {
                    format!(
                        "retry: stopped by {signal} after {attempts}; passed it on to the command"
                    )
                }
                Moment::Keyboard => format!(
                    "retry: stopped after {attempts}: the attempt died of {signal} typed at the \
                     terminal, so retry's whole job stops too"
                ),
                Moment::Output => format!(
                    "retry: stopped by {signal} after {attempts}, while writing the held output"
                ),
                Moment::Wait => {
                    format!("retry: stopped by {signal} after {attempts}, while waiting to retry")
                }
                Moment::Report => {
                    format!("retry: stopped by {signal} after {attempts}, while writing --report")
                }
            }
        }
    })
}

/// The JSON object for `event`, if the event has one.
fn json(event: &Event) -> Value {
    match event {
        Event::AttemptStart { numbering, at } => json!({
            "event": "attempt_start",
            "attempt": numbering.attempt,
            "attempt_since_reset": numbering.since_reset,
            "max_attempts": limit_json(numbering.limit),
            "offset_ms": to_millis(*at),
        }),
        Event::AttemptEnd(end) => attempt_end_json(end),
        Event::Wait {
            before_attempt,
            wait,
            cause,
        } => json!({
            "event": "wait",
            "before_attempt": before_attempt,
            "wait_ms": to_millis(*wait),
            "cause": cause.name(),
        }),
        Event::Done(done) => {
            let mut object = json!({
                "event": "done",
                "status": done.status,
                "attempts": done.attempts,
                "reason": done.reason.name(),
                "elapsed_ms": to_millis(done.elapsed),
            });
            if let Some(error) = &done.report_error {
                object["report_error"] = json!(error);
            }
            match &done.reason {
                Reason::SpawnFailed(error) | Reason::OutputLost(error) => {
                    object["error"] = json!(error)
                }
                Reason::Interrupted(signal, _) => object["signal"] = json!(signals::name(*signal)),
                _ => {}
            }
            object
        }
        Event::Warning(message) => json!({
            "event": "warning",
            "message": message,
        }),
    }
}

/// The `attempt_end` event's object: the stable keys, with `pattern`, `signal` and `reset` only
/// when they apply. The run report records its attempts from it too.
pub fn attempt_end_json(end: &AttemptEnd) -> Value {
    let mut object = json!({
        "event": "attempt_end",
        "attempt": end.numbering.attempt,
        "status": end.termination.status(),
        "duration_ms": to_millis(end.duration),
        "verdict": end.verdict.name(),
        "timed_out": end.termination.time_limit().is_some(),
        "matched": end.matched().map(|(condition, _)| condition),
    });
    if let Some((_, pattern)) = end.matched() {
        object["pattern"] = json!(pattern);
    }
    if end.reset {
        object["reset"] = json!(true);
    }
    if let Some(signal) = end.termination.signal() {
        object["signal"] = json!(signals::name(signal));
    }
    object
}

/// `--max-attempts` in JSON: a number, or the string "unlimited".
pub fn limit_json(limit: AttemptLimit) -> Value {
    limit
        .count()
        .map_or_else(|| json!("unlimited"), |count| json!(count))
}

impl<W: Write> EventSink for Reporter<W> {
    fn emit(&mut self, event: Event) {
        // A command that cannot start, and output the tool could not keep, are failures to fix,
        // so they are said even under --quiet.
        let failure = matches!(
            &event,
            Event::Done(Done {
                reason: Reason::SpawnFailed(_) | Reason::OutputLost(_),
                ..
            })
        );
        if self.settings.verbosity == Verbosity::Quiet && !failure {
            return;
        }
        match self.settings.format {
            LogFormat::Text => self.text(event),
            LogFormat::Json => {
                let line = json(&event).to_string();
                self.write_line(&line);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Refusal;

    fn render(settings: LogSettings, events: Vec<Event>) -> String {
        let mut reporter = Reporter::new(Vec::new(), settings);
        events.into_iter().for_each(|event| reporter.emit(event));
        String::from_utf8(reporter.out).unwrap()
    }

    fn settings(format: LogFormat, verbosity: Verbosity) -> LogSettings {
        LogSettings { format, verbosity }
    }

    fn numbering(attempt: u64) -> Numbering {
        Numbering {
            attempt,
            since_reset: attempt,
            limit: "3".parse().unwrap(),
        }
    }

    fn end(attempt: u64, termination: Termination, verdict: Verdict) -> AttemptEnd {
        AttemptEnd {
            numbering: numbering(attempt),
            termination,
            duration: Duration::from_millis(12),
            output: OutputMatch::default(),
            reset: false,
            verdict,
        }
    }

    fn failed_then_gave_up() -> Vec<Event> {
        let start = |attempt| Event::AttemptStart {
            numbering: numbering(attempt),
            at: Duration::ZERO,
        };
        vec![
            start(1),
            Event::AttemptEnd(end(1, Termination::Exited(7), Verdict::Retry)),
            Event::Wait {
                before_attempt: 2,
                wait: Duration::from_millis(1500),
                cause: WaitCause::Backoff,
            },
            start(2),
            Event::AttemptEnd(end(2, Termination::Exited(7), Verdict::Stop)),
            Event::Done(Done {
                last: Some(7),
                report_error: None,
                status: 7,
                attempts: 2,
                reason: Reason::NotRetryable(Refusal::InStopOn),
                elapsed: Duration::from_millis(1530),
            }),
        ]
    }

    #[test]
    fn text_says_one_line_per_retry_and_one_when_giving_up() {
        let text = render(
            settings(LogFormat::Text, Verbosity::Normal),
            failed_then_gave_up(),
        );
        assert_eq!(
            text,
            "retry: attempt 1/3 failed with exit status 7; retrying in 1.5s\n\
             retry: giving up after 2 attempts: exit status 7 is in --stop-on\n"
        );
    }

    #[test]
    fn text_describes_signals_timeouts_and_deadlines() {
        let cases = [
            (
                Termination::Signaled(9),
                "attempt 2/3 died of SIGKILL (status 137)",
            ),
            (
                Termination::TimedOut {
                    limit: TimeLimit::Attempt,
                    signal: Some(15),
                },
                "attempt 2/3 timed out after 12ms (status 124)",
            ),
            (
                Termination::TimedOut {
                    limit: TimeLimit::Deadline,
                    signal: None,
                },
                "attempt 2/3 was stopped at the --max-time deadline (status 124)",
            ),
        ];
        for (termination, text) in cases {
            assert_eq!(describe(&end(2, termination, Verdict::Retry)), text);
        }
    }

    #[test]
    fn text_tells_when_the_backoff_starts_over() {
        let mut long = end(7, Termination::Exited(1), Verdict::Retry);
        long.reset = true;
        long.numbering.since_reset = 0;
        assert_eq!(
            describe(&long),
            "attempt 7 (0/3 since the backoff started over) failed with exit status 1 \
             after running 12ms, so the backoff starts over"
        );
        assert_eq!(numbering(3).to_string(), "3/3");
    }

    #[test]
    fn interrupted_runs_end_by_their_signal() {
        let done = Done {
            last: Some(0),
            report_error: None,
            status: 143,
            attempts: 1,
            reason: Reason::Interrupted(15, Moment::Attempt),
            elapsed: Duration::ZERO,
        };
        assert_eq!(done.exit(), Exit::KilledBy(15));
        let line = give_up_line(&done).unwrap();
        assert_eq!(
            line,
            "retry: stopped by SIGTERM after 1 attempt; passed it on to the command"
        );
        assert_eq!(json(&Event::Done(done))["signal"], "SIGTERM");
    }

    #[test]
    fn verbose_text_adds_attempt_starts() {
        let text = render(
            settings(LogFormat::Text, Verbosity::Verbose),
            failed_then_gave_up(),
        );
        assert!(text.starts_with("retry: attempt 1/3 starting\n"), "{text}");
        assert_eq!(text.lines().count(), 4, "{text}");
    }

    #[test]
    fn quiet_says_nothing() {
        for format in [LogFormat::Text, LogFormat::Json] {
            assert_eq!(
                render(settings(format, Verbosity::Quiet), failed_then_gave_up()),
                ""
            );
        }
    }

    #[test]
    fn json_writes_one_object_per_event() {
        let text = render(
            settings(LogFormat::Json, Verbosity::Normal),
            failed_then_gave_up(),
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
        assert_eq!(objects[1]["matched"], Value::Null);
        assert_eq!(objects[2]["wait_ms"], 1500.0);
        assert_eq!(objects[5]["reason"], "not_retryable");
        assert_eq!(objects[5]["status"], 7);
    }

    #[test]
    fn json_names_the_output_condition_that_matched() {
        let mut matched = end(1, Termination::Exited(22), Verdict::Stop);
        matched.output = OutputMatch {
            retry: Some("503".into()),
            stop: Some("404".into()),
        };
        let object = json(&Event::AttemptEnd(matched));
        assert_eq!(
            (object["matched"].as_str(), object["pattern"].as_str()),
            (Some("stop_on_output"), Some("404"))
        );
    }
}
