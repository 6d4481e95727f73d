//! How one attempt ended, and the status a shell would report for it.
//!
//! Every decision and report works on the status number: death by signal N is 128+N, as in
//! shells, and an attempt cut by its timeout or the run's deadline is 124, as with coreutils
//! `timeout`. The [`Termination`] keeps the detail behind the number for messages and events.

use crate::signal::Signal;

/// The status of an attempt ended by `--timeout` or `--max-time`, as coreutils `timeout` gives.
pub const TIMED_OUT: u8 = 124;

/// The end of one attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Termination {
    /// The command exited with this code.
    Exited(u8),
    /// The command died of this signal.
    Signaled(Signal),
    /// A time limit ended the attempt.
    TimedOut {
        /// The limit that ran out.
        limit: TimeLimit,
        /// The signal the command died of, if it did not exit by itself.
        signal: Option<Signal>,
    },
}

/// The time limits that can cut an attempt short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeLimit {
    /// `--timeout`, the limit of one attempt.
    Attempt,
    /// `--max-time`, the deadline of the whole run.
    Deadline,
}

impl Termination {
    /// The status as shells report it: the exit code, 128+N for signal N, 124 for a time limit.
    pub fn status(self) -> u8 {
        match self {
            Termination::Exited(code) => code,
            Termination::Signaled(signal) => signal.status(),
            Termination::TimedOut { .. } => TIMED_OUT,
        }
    }

    /// The signal the command died of, if it did.
    pub fn signal(self) -> Option<Signal> {
        match self {
            Termination::Exited(_) => None,
            Termination::Signaled(signal) => Some(signal),
            Termination::TimedOut { signal, .. } => signal,
        }
    }

    /// The time limit that ended the attempt, if one did.
    pub fn time_limit(self) -> Option<TimeLimit> {
        match self {
            Termination::TimedOut { limit, .. } => Some(limit),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_follow_shells_and_timeout() {
        assert_eq!(Termination::Signaled(Signal::TERM).status(), 143);
        assert_eq!(Termination::Exited(3).status(), 3);
        let cut = Termination::TimedOut {
            limit: TimeLimit::Attempt,
            signal: Some(Signal::KILL),
        };
        assert_eq!((cut.status(), cut.signal()), (124, Some(Signal::KILL)));
        assert_eq!(cut.time_limit(), Some(TimeLimit::Attempt));
    }
}
