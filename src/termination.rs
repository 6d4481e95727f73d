//! How one attempt ended, and the status a shell would report for it.
//!
//! Every decision and report works on the status number: death by signal N is 128+N, as in
//! shells, and an attempt cut by its timeout or the run's deadline is 124, as with coreutils
//! `timeout`. The [`Termination`] keeps the detail behind the number for messages and events.

/// The status of an attempt ended by `--timeout` or `--max-time`, as coreutils `timeout` gives.
pub(crate) const TIMED_OUT: u8 = 124;

/// The status of death by `signal`, 128+N as shells report it, saturating at 255.
pub(crate) fn signal_status(signal: i32) -> u8 {
    u8::try_from(128 + signal.clamp(0, 127)).unwrap_or(u8::MAX)
}

/// The end of one attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Termination {
    /// The command exited with this code.
    Exited(u8),
    /// The command died of this signal.
    Signaled(i32),
    /// A time limit ended the attempt.
    TimedOut {
        limit: TimeLimit,
        /// The signal the command died of, if it did not exit by itself.
        signal: Option<i32>,
    },
}

/// The time limits that can cut an attempt short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TimeLimit {
    /// `--timeout`, the limit of one attempt.
    Attempt,
    /// `--max-time`, the deadline of the whole run.
    Deadline,
}

impl Termination {
    /// The status as shells report it: the exit code, 128+N for signal N, 124 for a time limit.
    pub(crate) fn status(self) -> u8 {
        match self {
            Termination::Exited(code) => code,
            Termination::Signaled(signal) => signal_status(signal),
            Termination::TimedOut { .. } => TIMED_OUT,
        }
    }

    /// The signal the command died of, if it did.
    pub(crate) fn signal(self) -> Option<i32> {
        match self {
            Termination::Exited(_) => None,
            Termination::Signaled(signal) => Some(signal),
            Termination::TimedOut { signal, .. } => signal,
        }
    }

    /// The time limit that ended the attempt, if one did.
    pub(crate) fn time_limit(self) -> Option<TimeLimit> {
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
    fn signal_statuses_follow_shells() {
        assert_eq!(signal_status(9), 137);
        assert_eq!(signal_status(2), 130);
        assert_eq!(signal_status(200), 255);
    }

    #[test]
    fn statuses_follow_shells_and_timeout() {
        assert_eq!(Termination::Signaled(15).status(), 143);
        assert_eq!(Termination::Exited(3).status(), 3);
        let cut = Termination::TimedOut {
            limit: TimeLimit::Attempt,
            signal: Some(9),
        };
        assert_eq!((cut.status(), cut.signal()), (124, Some(9)));
        assert_eq!(cut.time_limit(), Some(TimeLimit::Attempt));
    }
}
