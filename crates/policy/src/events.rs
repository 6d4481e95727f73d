//! What a run reports about itself, as it happens: the [`Event`]s the run loop emits, and the
//! [`EventSink`]s that take them (the reporter on stderr, the report file).

use std::time::Duration;

use crate::attempts::Numbering;
use crate::deadline::Deadline;
use crate::outcome::{AttemptOutcome, HookEnd, RunEnd};

/// Something that happened during a run.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// An attempt is about to start, this long after the start of the run.
    AttemptStart {
        /// Its numbers.
        numbering: Numbering,
        /// How long after the start of the run.
        at: Duration,
    },
    /// An attempt ended, and the run decided what follows.
    AttemptEnd(AttemptOutcome),
    /// The run waits this long (`--splay`) before the first attempt.
    Splay(Duration),
    /// Before the first attempt, when the run's deadline came from outside its command line (an
    /// outer run's, a CI job's): how long it has, from where, and that in words.
    Deadline(Deadline, String),
    /// Another run of the job holds it, and this run waits for it to end (`--overlap wait`),
    /// no later than its deadline, before its first attempt.
    JobWait {
        /// The job, as `--job` named it.
        job: String,
        /// The run that holds it, in words, when its store can say.
        holder: Option<String>,
    },
    /// Something the user should know that changes nothing in the run.
    Warning(String),
    /// A hook ran (or could not).
    HookEnd(HookEnd),
    /// The run is over.
    Done(RunEnd),
    /// The tool itself failed before any attempt could run (bad usage, a `--report` it cannot
    /// use...), and ends with status 125: the message says what was wrong.
    Failed(String),
}

/// Where the run loop sends its events.
pub trait EventSink {
    /// Take note of `event`.
    fn emit(&mut self, event: &Event);
}

/// Both sinks get every event.
impl<A: EventSink, B: EventSink> EventSink for (A, B) {
    fn emit(&mut self, event: &Event) {
        self.0.emit(event);
        self.1.emit(event);
    }
}

/// A sink that may be absent.
impl<S: EventSink> EventSink for Option<S> {
    fn emit(&mut self, event: &Event) {
        if let Some(sink) = self {
            sink.emit(event);
        }
    }
}

/// A sink lent for the run.
impl<S: EventSink> EventSink for &mut S {
    fn emit(&mut self, event: &Event) {
        (**self).emit(event);
    }
}

/// A test's sink keeps every event.
#[cfg(test)]
impl EventSink for Vec<Event> {
    fn emit(&mut self, event: &Event) {
        self.push(event.clone());
    }
}
