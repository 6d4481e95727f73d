//! A run's spans, recorded from its events: one for the run, a child of the span its parent
//! named, and one for each attempt, a child of the run's, with its number, its end, the
//! verdict, the reason the run stopped after it, and the wait before it; a wait the retry
//! budget set, and a breaker that kept the run out, are events on them. Times are the wall
//! clock's at the run's start plus the monotonic clock's since, so that a clock step during the
//! run bends no span. At most [`EACH_END`] attempts are kept at each end of a long run, the
//! number left out said on the run's span.

use std::time::{Duration, Instant, SystemTime};

use crate::first_and_last::FirstAndLast;
use retry_policy::events::{Event, EventSink};
use retry_policy::exit::Exit;
use retry_policy::outcome::{Next, Reason, RunEnd, WaitCause};
use retry_policy::run_id::RunId;
use retry_policy::trace_context::{SpanId, TraceContext};

/// The most attempts' spans kept at each end of a run.
const EACH_END: usize = 500;

/// An attribute's value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Text(String),
    Int(i64),
    Bool(bool),
}

/// A named moment in a span.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SpanEvent {
    pub(crate) time: u64,
    pub(crate) name: &'static str,
    pub(crate) attributes: Vec<(&'static str, Value)>,
}

/// One span, as the exporters encode it; times in Unix nanoseconds.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Span {
    pub(crate) id: SpanId,
    pub(crate) parent: Option<SpanId>,
    pub(crate) name: &'static str,
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) attributes: Vec<(&'static str, Value)>,
    pub(crate) events: Vec<SpanEvent>,
    /// Why it failed, if it did: its status is an error with this message.
    pub(crate) error: Option<String>,
}

/// An attempt under way or ended.
#[derive(Debug)]
struct Attempt {
    number: u64,
    start: Instant,
    end: Option<Instant>,
    status: Option<u8>,
    verdict: &'static str,
    reason: Option<&'static str>,
    /// The wait before it, and what set its length.
    wait_before: Option<(Duration, WaitCause)>,
}

/// The run's spans as its events come.
#[derive(Debug)]
pub(crate) struct Recorder {
    context: TraceContext,
    run_id: RunId,
    wall: SystemTime,
    started: Instant,
    attempts: FirstAndLast<Attempt>,
    /// The wait before the next attempt.
    next_wait: Option<(Duration, WaitCause)>,
}

impl Recorder {
    /// A recorder for the run `run_id` in `context`, starting now.
    pub(crate) fn new(context: TraceContext, run_id: RunId) -> Recorder {
        Recorder {
            context,
            run_id,
            wall: SystemTime::now(),
            started: Instant::now(),
            attempts: FirstAndLast::new(EACH_END),
            next_wait: None,
        }
    }

    /// `at` in Unix nanoseconds.
    fn nanos(&self, at: Instant) -> u64 {
        let since_epoch = self.wall.duration_since(SystemTime::UNIX_EPOCH);
        let since_start = at.saturating_duration_since(self.started);
        since_epoch.map_or(0, |epoch| (epoch + since_start).as_nanos() as u64)
    }

    /// The spans of the run that ended now as `end`: its own, and its attempts'.
    pub(crate) fn spans(&self, end: &RunEnd) -> Vec<Span> {
        let ended = Instant::now();
        let mut spans = vec![self.run_span(end, ended)];
        spans.extend(
            self.attempts
                .kept()
                .map(|attempt| self.attempt_span(attempt, ended)),
        );
        spans
    }

    fn run_span(&self, end: &RunEnd, ended: Instant) -> Span {
        let mut attributes = vec![
            ("retry.run_id", Value::Text(self.run_id.to_string())),
            ("retry.attempts", Value::Int(self.attempts.total() as i64)),
        ];
        let mut events = Vec::new();
        let status = Exit::of(end).status();
        attributes.push(("retry.reason", Value::Text(end.reason.name().into())));
        attributes.push(("retry.exit_status", Value::Int(status.into())));
        attributes.push(("retry.flaky", Value::Bool(end.flaky())));
        if matches!(end.reason, Reason::BreakerOpen { .. }) {
            events.push(SpanEvent {
                time: self.nanos(ended),
                name: "retry.breaker.open",
                attributes: vec![],
            });
        }
        let error = (status != 0).then(|| format!("{}, exit status {status}", end.reason.name()));
        if self.attempts.omitted() > 0 {
            let omitted = self.attempts.omitted() as i64;
            attributes.push(("retry.attempt_spans_left_out", Value::Int(omitted)));
        }
        Span {
            id: self.context.run_span,
            parent: self.context.parent,
            name: "retry",
            start: self.nanos(self.started),
            end: self.nanos(ended),
            attributes,
            events,
            error,
        }
    }

    fn attempt_span(&self, attempt: &Attempt, ended: Instant) -> Span {
        let start = self.nanos(attempt.start);
        let mut attributes = vec![
            ("retry.attempt", Value::Int(attempt.number as i64)),
            ("retry.verdict", Value::Text(attempt.verdict.into())),
        ];
        if let Some(status) = attempt.status {
            attributes.push(("retry.exit_status", Value::Int(status.into())));
        }
        if let Some(reason) = attempt.reason {
            attributes.push(("retry.reason", Value::Text(reason.into())));
        }
        let mut events = Vec::new();
        if let Some((wait, cause)) = attempt.wait_before {
            let millis = Value::Int(wait.as_millis() as i64);
            let cause_name = cause_name(cause);
            attributes.push(("retry.wait_before_ms", millis.clone()));
            attributes.push(("retry.wait_cause", Value::Text(cause_name.clone())));
            if matches!(cause, WaitCause::Budget | WaitCause::Shared) {
                events.push(SpanEvent {
                    time: start,
                    name: "retry.budget.wait",
                    attributes: vec![
                        ("retry.wait_ms", millis),
                        ("retry.wait_cause", Value::Text(cause_name)),
                    ],
                });
            }
        }
        let failed = attempt.status.is_none_or(|status| status != 0);
        Span {
            id: self.context.attempt_span(attempt.number),
            parent: Some(self.context.run_span),
            name: "attempt",
            start,
            end: self.nanos(attempt.end.unwrap_or(ended)),
            attributes,
            events,
            error: failed.then(|| attempt.verdict.to_string()),
        }
    }
}

/// What set a wait's length, as the JSON events name it.
fn cause_name(cause: WaitCause) -> String {
    serde_json::to_value(cause)
        .ok()
        .and_then(|value| value.as_str().map(str::to_string))
        .unwrap_or_default()
}

impl EventSink for Recorder {
    fn emit(&mut self, event: &Event) {
        match event {
            Event::Splay(wait) => self.next_wait = Some((*wait, WaitCause::Splay)),
            Event::AttemptStart { numbering, .. } => self.attempts.push(Attempt {
                number: numbering.attempt,
                start: Instant::now(),
                end: None,
                status: None,
                // Until its end comes: one that could not start, or a signal cut short, has none.
                verdict: "unfinished",
                reason: None,
                wait_before: self.next_wait.take(),
            }),
            Event::AttemptEnd(outcome) => {
                if let Some(attempt) = self.attempts.latest_mut() {
                    attempt.end = Some(Instant::now());
                    attempt.status = Some(outcome.termination.status());
                    attempt.verdict = outcome.next.verdict();
                    if let Next::Stop(reason) = &outcome.next {
                        attempt.reason = Some(reason.name());
                    }
                }
                if let Next::Retry { wait, cause } = outcome.next {
                    self.next_wait = Some((wait, cause));
                }
            }
            _ => {}
        }
    }
}
