//! What the run makes of each attempt, and how the run ends: the values the loop decides, which
//! the text reporter, the JSON events and the report each render in their own way.
//!
//! One attempt's outcome is one [`AttemptOutcome`], emitted once: how the command ended, what its
//! output matched, and [`Next`], the run's decision, which carries the wait before the next
//! attempt (and what set its length) or the [`Reason`] the run stops.

use std::time::Duration;

use crate::attempts::Numbering;
use crate::deadline::DeadlineSource;
use crate::matching::OutputMatch;
use crate::requested::Requested;
use crate::rules::RuleRef;
use crate::signal::Signal;
use crate::termination::Termination;

/// One attempt, ended, and what the run does next.
#[derive(Clone, Debug, PartialEq)]
pub struct AttemptOutcome {
    /// The attempt's numbers.
    pub numbering: Numbering,
    /// How it ended.
    pub termination: Termination,
    /// How long the attempt ran.
    pub duration: Duration,
    /// What the rules' patterns found in its output.
    pub matched: OutputMatch,
    /// The rule that decided what its end means.
    pub rule: RuleRef,
    /// It ran long enough (`--reset-after`) to start the backoff and the count over.
    pub reset: bool,
    /// What the command asked for, a wait capped at `RETRY_MAX_REQUESTED_WAIT`.
    pub requested: Option<Requested>,
    /// It exited with a success status, but the rule that decided calls it a failure.
    pub unready: bool,
    /// What the run does next.
    pub next: Next,
}

/// The run's decision after an attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Next {
    /// Another attempt, after this wait, whose length `cause` set.
    Retry {
        /// How long to wait.
        wait: Duration,
        /// What set the wait's length.
        cause: WaitCause,
    },
    /// No further attempt, for this reason (success among them).
    Stop(Reason),
}

impl Next {
    /// The decision's name in JSON: `success`, `retry` or `stop`.
    pub fn verdict(&self) -> &'static str {
        match self {
            Next::Retry { .. } => "retry",
            Next::Stop(Reason::Success) => "success",
            Next::Stop(_) => "stop",
        }
    }
}

impl AttemptOutcome {
    /// The wait the command asked for, if it asked for one.
    pub fn requested_wait(&self) -> Option<Duration> {
        match self.requested {
            Some(Requested::Wait(wait)) => Some(wait),
            _ => None,
        }
    }

    /// Whether the command asked not to be retried.
    pub fn requested_stop(&self) -> bool {
        self.requested == Some(Requested::Stop)
    }

    /// The rule that made its success status a failure, if one did.
    pub fn unready_by(&self) -> Option<&RuleRef> {
        self.unready.then_some(&self.rule)
    }
}

/// What set the length of a wait; in JSON, its name in snake case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitCause {
    /// `--splay`, before the first attempt.
    Splay,
    /// The backoff schedule.
    Backoff,
    /// The retry budget had no token sooner.
    Budget,
    /// The command asked for a wait longer than the backoff's.
    Requested,
    /// A run sharing the budget was asked to wait (a `Retry-After`), and that holds for this
    /// one too.
    Shared,
}

/// A wait the time left before the deadline could not hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shortfall {
    /// The wait the next attempt needed.
    pub wait: Duration,
    /// Whose wait it was.
    pub cause: WaitCause,
    /// The time left before the deadline.
    pub left: Duration,
    /// Where the deadline came from.
    pub source: DeadlineSource,
}

/// Why a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// A rule called an attempt a success.
    Success,
    /// Every allowed attempt failed.
    Exhausted,
    /// The last end was one not to retry, by this rule.
    NotRetryable(RuleRef),
    /// The command could not be started: how, and why in words.
    SpawnFailed(SpawnFailure, String),
    /// The run's deadline (from where it says) ended the last attempt, leaves no time for
    /// another, or had passed before the first.
    Deadline(DeadlineSource),
    /// The wait before the next attempt would end at or past the run's deadline.
    WaitPastDeadline(Shortfall),
    /// A wait (the backoff's, a requested one, `--splay`, the budget's) ended this long past the
    /// run's deadline (from where it says): the tool was stopped meanwhile (Ctrl-Z, a frozen
    /// cgroup) or the machine was too busy to wake it in time, so no attempt starts after it.
    WokeLate(Duration, DeadlineSource),
    /// The tool received this signal at this moment of the run, and stops.
    Interrupted(Signal, Moment),
    /// The retry budget has no token for another attempt in time (before `--max-time`, within
    /// its debt bound); the budget's words for it.
    Budget(String),
    /// The retry budget cannot be used (its store failed, its file cannot be trusted), and
    /// A store given `fail=closed` makes that no token.
    BudgetUnavailable,
    /// Output that the tool could neither keep nor pass on; the text says why.
    OutputLost(String),
    /// The command asked not to be retried (`stop` in `RETRY_AFTER_FILE` or its output).
    StopRequested,
    /// The budget's breaker was open, or half open with another run as its probe: no attempt
    /// was made.
    BreakerOpen {
        /// The breaker, in words.
        breaker: String,
        /// How long it stays open yet (or the other run's probe may still take).
        left: Duration,
        /// Another run is the breaker's probe, and this is the most its lease has left.
        probing: bool,
    },
    /// Another run of the job was in progress (its terms say `--overlap skip`; with `wait`, a
    /// wait that reaches the deadline ends by the deadline instead): no attempt was made.
    /// Which, in words.
    Overlap(String),
}

/// How a run ended, as a budget's breaker counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// It succeeded.
    Succeeded,
    /// It gave up.
    GaveUp,
    /// It ended without an end the breaker counts (a signal, a command that could not start,
    /// output lost, a requested stop): nothing is counted, and a probe's lease is given back.
    Unjudged,
}

/// A shell line run at a moment of the run: `--on-retry` or `--on-give-up`; in JSON, its name
/// in snake case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Hook {
    /// After a failed attempt that will be retried, before the wait.
    OnRetry,
    /// Once, when the run gives up.
    OnGiveUp,
}

impl Hook {
    /// Every hook, in the order of [`Hook::index`].
    pub const ALL: [Hook; 2] = [Hook::OnRetry, Hook::OnGiveUp];

    /// The flag that gives it.
    pub fn flag(self) -> &'static str {
        match self {
            Hook::OnRetry => "--on-retry",
            Hook::OnGiveUp => "--on-give-up",
        }
    }

    /// Its place in [`Hook::ALL`], for a table of what each hook has.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// How a hook ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookEnd {
    /// The hook that ran, or could not.
    pub hook: Hook,
    /// How it ended.
    pub outcome: HookOutcome,
    /// How long it ran.
    pub duration: Duration,
    /// A signal that ends the run arrived while it ran (and was passed on to it).
    pub interrupted_by: Option<Signal>,
}

/// What became of a hook.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HookOutcome {
    /// It ran, and ended so (a time limit makes it status 124, as for an attempt).
    Ended(Termination),
    /// It did not run: the status a shell would give (127 or 126, or 124 when `--max-time` left
    /// no time), and why.
    NotRun {
        /// The status a shell would give.
        status: u8,
        /// Why, in words.
        why: String,
    },
}

impl HookEnd {
    /// Its status, as for an attempt.
    pub fn status(&self) -> u8 {
        match &self.outcome {
            HookOutcome::Ended(termination) => termination.status(),
            HookOutcome::NotRun { status, .. } => *status,
        }
    }
}

impl Reason {
    /// Whether the run gave up: it ended neither in success nor by a signal.
    pub fn gives_up(&self) -> bool {
        !matches!(
            self,
            Reason::Success
                | Reason::Interrupted(..)
                | Reason::BreakerOpen { .. }
                | Reason::Overlap(_)
        )
    }

    /// How the run ended, as a budget's breaker counts it: unjudged for a run that a signal
    /// stopped, that could not start its command or keep its output, that the command asked to
    /// stop, or that the breaker kept from starting.
    pub fn ended(&self) -> Ended {
        match self {
            Reason::Success => Ended::Succeeded,
            Reason::Exhausted
            | Reason::NotRetryable(_)
            | Reason::Deadline(_)
            | Reason::WaitPastDeadline(_)
            | Reason::WokeLate(..)
            | Reason::Budget(_)
            | Reason::BudgetUnavailable => Ended::GaveUp,
            Reason::SpawnFailed(..)
            | Reason::Interrupted(..)
            | Reason::OutputLost(_)
            | Reason::StopRequested
            | Reason::BreakerOpen { .. }
            | Reason::Overlap(_) => Ended::Unjudged,
        }
    }

    /// The stable name used in JSON.
    pub fn name(&self) -> &'static str {
        match self {
            Reason::Success => "success",
            Reason::Exhausted => "exhausted",
            Reason::NotRetryable(_) => "not_retryable",
            Reason::SpawnFailed(..) => "spawn_failed",
            Reason::Deadline(_) | Reason::WaitPastDeadline(_) | Reason::WokeLate(..) => "deadline",
            Reason::Interrupted(..) => "interrupted",
            Reason::Budget(_) | Reason::BudgetUnavailable => "budget",
            Reason::OutputLost(_) => "output_lost",
            Reason::StopRequested => "stop_requested",
            Reason::BreakerOpen { .. } => "breaker_open",
            Reason::Overlap(_) => "overlap",
        }
    }

    /// What went wrong, in words, for a command that could not start or output that was lost.
    pub fn error(&self) -> Option<&str> {
        match self {
            Reason::SpawnFailed(_, error) | Reason::OutputLost(error) => Some(error),
            _ => None,
        }
    }

    /// Where the deadline that ended the run came from, when one did.
    pub fn deadline(&self) -> Option<DeadlineSource> {
        match self {
            Reason::Deadline(source) | Reason::WokeLate(_, source) => Some(*source),
            Reason::WaitPastDeadline(shortfall) => Some(shortfall.source),
            _ => None,
        }
    }
}

/// Why a command could not be started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpawnFailure {
    /// There is no such program.
    NotFound,
    /// The program is there but cannot be executed.
    CannotExecute,
    /// The tool failed to set the attempt up (its stdin, say).
    ToolFailed,
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
    /// While the retry budget was consulted: waiting for its lock, or for its store.
    Budget,
    /// While the run waited for its job's turn (`--job`): for another run of the job to end,
    /// or for the store that keeps the job's terms.
    Job,
    /// While the job's history was kept, at the end.
    History,
    /// While a hook ran (the signal was passed on to it).
    Hook(Hook),
    /// While the report was written, at the end.
    Report,
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunEnd {
    /// Attempts made (a command that could not start counts as one).
    pub attempts: u64,
    /// How the last attempt ended, if one ran (a command that could not start did not).
    pub last: Option<Termination>,
    /// The last attempt exited with a success status, but this rule calls it a failure.
    pub last_unready: Option<RuleRef>,
    /// Why the run ended.
    pub reason: Reason,
    /// From the start of the run to its end.
    pub elapsed: Duration,
    /// Why `--report` could not be written, which makes the tool's own exit 125.
    pub report_error: Option<String>,
    /// The status `--flaky-exit` asks for, when the run succeeded only after failed attempts.
    pub flaky_exit: Option<u8>,
}

impl RunEnd {
    /// Whether the run succeeded only after failed attempts.
    pub fn flaky(&self) -> bool {
        self.reason == Reason::Success && self.attempts > 1
    }

    /// A run's end for a test: `attempts` made, the last ending as `last`, for `reason`, and
    /// nothing else to say.
    #[cfg(test)]
    pub(crate) fn of(reason: Reason, attempts: u64, last: Option<Termination>) -> RunEnd {
        RunEnd {
            attempts,
            last,
            last_unready: None,
            reason,
            elapsed: Duration::ZERO,
            report_error: None,
            flaky_exit: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_hook_has_its_place_in_the_table() {
        for (place, hook) in Hook::ALL.iter().enumerate() {
            assert_eq!(hook.index(), place, "{hook:?}");
            // A hook missing from ALL would fail this match's exhaustiveness, not this test.
            match hook {
                Hook::OnRetry | Hook::OnGiveUp => assert!(hook.flag().starts_with("--on-")),
            }
        }
    }
}
