//! What a run's end is to its job, decided once for everything that counts a job's runs: its
//! history (`retry job history`), its tolerance of failures (`retry job set --alert-after N`),
//! and what its heartbeat monitor is told.
//!
//! A run another run of its own job kept out is no failure of the job: it exits 75, but its
//! monitor hears at most a note, its history does not count it, and it neither breaks nor adds
//! to a run of failures. A run an open breaker kept out is a failure of the job: the service it
//! depends on is down. A run a signal stopped, or whose command could not start, is not counted
//! in the history, but its monitor hears its status as a failure, for nobody else will.

use crate::outcome::{Reason, RunEnd};

/// What one run is, in its job's history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counted {
    /// Its first attempt succeeded.
    Clean,
    /// It succeeded after failed attempts.
    Flaky,
    /// It gave up after an attempt.
    Failed,
}

/// What a job's monitor is told of a run that ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Told {
    /// It succeeded.
    Success,
    /// It failed, with this status.
    Failure(u8),
    /// It failed with this status, but its job tolerates it (`--alert-after`): a note where the
    /// monitor keeps notes, alerting no one.
    Tolerated(u8),
    /// Another run of its job kept it out, exiting with this status: a note where the monitor
    /// keeps notes, alerting no one.
    KeptOut(u8),
}

/// What the run that ended as `end` is in its job's history: none for a run that made no
/// attempt, that a signal stopped, or whose command could not be started.
pub fn counted(end: &RunEnd) -> Option<Counted> {
    match &end.reason {
        Reason::Success if end.attempts > 1 => Some(Counted::Flaky),
        Reason::Success => Some(Counted::Clean),
        reason if reason.gives_up() && end.last.is_some() => Some(Counted::Failed),
        _ => None,
    }
}

/// What the monitor of a job whose failures alert from the `alert_after`th in a row is told
/// of the run that ended as `end` with exit `status`, when its history counts `failed_in_a_row`
/// failed runs in a row, this one among them (none when the history could not be kept).
pub fn told(end: &RunEnd, status: u8, alert_after: u32, failed_in_a_row: Option<u32>) -> Told {
    match (&end.reason, status) {
        (Reason::Overlap(_), status) => Told::KeptOut(status),
        (_, 0) => Told::Success,
        // A failed run its job tolerates (not a flaky one that --flaky-exit fails).
        (_, status) if failed_in_a_row.is_some_and(|count| (1..alert_after).contains(&count)) => {
            Told::Tolerated(status)
        }
        (_, status) => Told::Failure(status),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::termination::Termination;
    use std::time::Duration;

    fn end(reason: Reason, attempts: u64) -> RunEnd {
        RunEnd::of(
            reason,
            attempts,
            (attempts > 0).then_some(Termination::Exited(1)),
        )
    }

    #[test]
    fn a_run_its_own_job_kept_out_is_no_failure_and_a_breakers_is_one() {
        let kept_out = end(Reason::Overlap("another run".into()), 0);
        assert_eq!(counted(&kept_out), None);
        for failed_in_a_row in [None, Some(1), Some(5)] {
            assert_eq!(told(&kept_out, 75, 3, failed_in_a_row), Told::KeptOut(75));
        }
        let breaker = end(
            Reason::BreakerOpen {
                breaker: "the breaker".into(),
                left: Duration::from_secs(1),
                probing: false,
            },
            0,
        );
        assert_eq!(told(&breaker, 75, 1, None), Told::Failure(75));
    }

    #[test]
    fn failures_alert_from_the_one_the_job_asked_for() {
        let failed = end(Reason::Exhausted, 3);
        assert_eq!(counted(&failed), Some(Counted::Failed));
        assert_eq!(told(&failed, 7, 3, Some(1)), Told::Tolerated(7));
        assert_eq!(told(&failed, 7, 3, Some(2)), Told::Tolerated(7));
        assert_eq!(told(&failed, 7, 3, Some(3)), Told::Failure(7));
        assert_eq!(told(&failed, 7, 3, None), Told::Failure(7));
        let flaky = end(Reason::Success, 2);
        assert_eq!(counted(&flaky), Some(Counted::Flaky));
        assert_eq!(told(&flaky, 0, 3, Some(0)), Told::Success);
        // --flaky-exit makes a flaky run a failure of its own status.
        assert_eq!(told(&flaky, 3, 1, Some(0)), Told::Failure(3));
    }
}
