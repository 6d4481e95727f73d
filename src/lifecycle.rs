//! One run, one lifecycle: everything that happens around a run (its job's history, the hold
//! on its job, its end files, its monitor's pings, its trace) is an [`Observer`] of the same
//! run, in one list ([`Observers`]), each in the module of its capability. Each sees the run's events as they happen (its start is
//! the first `attempt_start`), and does its part when the run has ended, sharing one context
//! ([`Ending`]: how the run ended, the signal watch, the deadline, where warnings go, what the
//! job's history counted). The next capability of this kind is one new file and one line in
//! the list.
//!
//! What an observer does at the end comes in the order of its [`Stage`], never in the order of
//! the list: the run is counted first (what later stages show and tolerate), then what it held
//! is given back (before anything that can be slow), then its end files are written (their
//! failure is part of how it ended), and only then are others told, its status final. Which end
//! a run has is not an observer's to decide: the policy crate's precedence table decides it,
//! and the one observer that can keep a run from starting (its job's hold) is the loop's gate
//! (`retry_policy::run::JobGate`), asked there.

use std::time::Instant;

use retry_budget::history::Counts;
use retry_policy::events::{Event, EventSink};
use retry_policy::outcome::{Moment, Reason, RunEnd};
use retry_policy::signal::Signal;
use retry_process::signals::SignalWatch;

/// When an observer does its part at the run's end; the stages come in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Stage {
    /// Count the run (its job's history), which the later stages show and tolerate.
    Count,
    /// Give back what the run holds (its job), before anything that can be slow.
    GiveBack,
    /// Write the end files, whose failure is part of how the run ended.
    Write,
    /// Tell others how the run ended (a monitor, a trace's collector), its status final.
    Tell,
}

/// Something that happens around a run, from its start to its end.
pub(crate) trait Observer {
    /// When it does its part at the run's end.
    fn stage(&self) -> Stage;

    /// What happens in the run, as it happens.
    fn emit(&mut self, _event: &Event) {}

    /// Do its part now that the run has ended as `ending` says; a signal that arrives
    /// meanwhile ends the run by it (`Ending::interrupted`).
    fn finish(self: Box<Self>, ending: &mut Ending<'_>);
}

/// What the observers of a run share at its end.
pub(crate) struct Ending<'e> {
    /// How the run ended, so far.
    pub(crate) end: RunEnd,
    /// The signals that end a run, which every wait at the end stays awake to.
    pub(crate) watch: &'e SignalWatch,
    /// The run's one deadline, which bounds what is done after it too (with a grace).
    pub(crate) deadline: Option<Instant>,
    /// The job's runs as its history counted them, this one among them: its failed runs in a
    /// row, and its counts.
    pub(crate) counted: Option<(u32, Counts)>,
    /// Where the run says what happens: its reporter.
    say: &'e mut dyn EventSink,
    /// What was said at the end, which every later observer hears before its part.
    said: Vec<String>,
}

impl<'e> Ending<'e> {
    /// The end of the run that ended as `end`, told to `say`.
    pub(crate) fn new(
        end: RunEnd,
        watch: &'e SignalWatch,
        deadline: Option<Instant>,
        say: &'e mut dyn EventSink,
    ) -> Self {
        Ending {
            end,
            watch,
            deadline,
            counted: None,
            say,
            said: Vec::new(),
        }
    }

    /// Say what the user should know.
    pub(crate) fn warn(&mut self, message: String) {
        self.say.emit(&Event::Warning(message.clone()));
        self.said.push(message);
    }

    /// The run ends by `signal`, which arrived at `moment`, as it would have a moment later
    /// without what was being done.
    pub(crate) fn interrupted(&mut self, signal: Signal, moment: Moment) {
        self.end.reason = Reason::Interrupted(signal, moment);
    }

    /// Run `act` with how the run ended, the watch, the deadline, and a way to warn; what it
    /// returns is the signal that ends the run, if one came.
    pub(crate) fn telling(
        &mut self,
        act: impl FnOnce(
            &RunEnd,
            &SignalWatch,
            Option<Instant>,
            &mut dyn FnMut(String),
        ) -> Option<Signal>,
    ) {
        let (say, said) = (&mut *self.say, &mut self.said);
        let mut warn = |message: String| {
            say.emit(&Event::Warning(message.clone()));
            said.push(message);
        };
        if let Some(signal) = act(&self.end, self.watch, self.deadline, &mut warn) {
            self.interrupted(signal, Moment::Report);
        }
    }
}

/// The observers of one run.
#[derive(Default)]
pub(crate) struct Observers<'r>(Vec<Box<dyn Observer + 'r>>);

impl<'r> Observers<'r> {
    /// These observers, and `observer` too, if there is one.
    #[must_use]
    pub(crate) fn with(mut self, observer: Option<impl Observer + 'r>) -> Self {
        if let Some(observer) = observer {
            self.0.push(Box::new(observer));
        }
        self
    }

    /// Let each do its part at the run's end, stage by stage, each first hearing the warnings
    /// said at the end before it (a report and a monitor's body carry them); how the run ended,
    /// then.
    pub(crate) fn finish(mut self, mut ending: Ending<'_>) -> RunEnd {
        self.0.sort_by_key(|observer| observer.stage());
        for mut observer in self.0 {
            for message in &ending.said {
                observer.emit(&Event::Warning(message.clone()));
            }
            observer.finish(&mut ending);
        }
        ending.end
    }
}

impl EventSink for Observers<'_> {
    fn emit(&mut self, event: &Event) {
        for observer in &mut self.0 {
            observer.emit(event);
        }
    }
}
