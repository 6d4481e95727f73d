//! The one place where the tool's exit status is decided, and the numbers written down.
//!
//! They follow coreutils `timeout` and `env`: the tool's own errors are 125, a command that cannot
//! be found 127, one that cannot be executed 126, and death by signal N is 128+N, as shells report
//! it. Otherwise the tool exits with the last attempt's status, and a run that gives up never
//! exits 0. [`Exit::of`] turns how a run ended into an [`Exit`]; [`table`] is what `--help` and
//! the man page print, from the same variants.

use crate::outcome::{Reason, RunEnd, SpawnFailure};
use crate::signal::Signal;
use crate::termination::{TIMED_OUT, Termination};

/// How the tool ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// An attempt succeeded.
    Success,
    /// An attempt succeeded after failed ones, and `--flaky-exit` asks for this status.
    Flaky(u8),
    /// The run gave up; the last attempt's own status.
    GaveUp(u8),
    /// The run gave up after an attempt whose status 0 counted as a failure.
    GaveUpAfterZero,
    /// The run gave up after an attempt that a time limit ended.
    TimedOut,
    /// No attempt was made, for now: the budget's breaker was open, or another run of the job
    /// was in progress (sysexits' `EX_TEMPFAIL`).
    TryLater,
    /// The tool itself failed.
    ToolFailed,
    /// The command was found but could not be executed.
    CannotExecute,
    /// The command was not found.
    NotFound,
    /// The run gave up after an attempt that died of this signal.
    AttemptKilled(Signal),
    /// The tool received this signal, passed it on, and dies of it too.
    Stopped(Signal),
}

/// Every variant, with an example value, in the order of the table.
const VARIANTS: [Exit; 11] = [
    Exit::Success,
    Exit::Flaky(3),
    Exit::GaveUp(2),
    Exit::GaveUpAfterZero,
    Exit::TryLater,
    Exit::TimedOut,
    Exit::ToolFailed,
    Exit::CannotExecute,
    Exit::NotFound,
    Exit::AttemptKilled(Signal::KILL),
    Exit::Stopped(Signal::TERM),
];

impl Exit {
    /// How a run that ended as `end` ends the tool.
    pub fn of(end: &RunEnd) -> Exit {
        let exit = match &end.reason {
            Reason::Success => end.flaky_exit.map_or(Exit::Success, Exit::Flaky),
            Reason::Interrupted(signal, _) => return Exit::Stopped(*signal),
            Reason::SpawnFailed(failure, _) => Exit::from(*failure),
            Reason::OutputLost(_) => Exit::ToolFailed,
            Reason::BreakerOpen { .. } | Reason::Overlap(_) => Exit::TryLater,
            // No attempt ran: the deadline had passed before the first, or during `--splay`.
            Reason::WokeLate(..) | Reason::Deadline(_) if end.last.is_none() => Exit::TimedOut,
            _ => Exit::after_giving_up(end.last.map_or(0, Termination::status)),
        };
        match end.report_error {
            Some(_) => Exit::ToolFailed,
            None => exit,
        }
    }

    /// How a run that gave up after an attempt with `status` ends.
    fn after_giving_up(status: u8) -> Exit {
        match status {
            0 => Exit::GaveUpAfterZero,
            TIMED_OUT => Exit::TimedOut,
            129..=255 => {
                Signal::of_status(status).map_or(Exit::GaveUp(status), Exit::AttemptKilled)
            }
            status => Exit::GaveUp(status),
        }
    }

    /// The exit status, 128+N for a signal N.
    pub fn status(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Flaky(status) | Exit::GaveUp(status) => status,
            Exit::GaveUpAfterZero => 1,
            Exit::TryLater => 75,
            Exit::TimedOut => TIMED_OUT,
            Exit::ToolFailed => 125,
            Exit::CannotExecute => 126,
            Exit::NotFound => 127,
            Exit::AttemptKilled(signal) | Exit::Stopped(signal) => signal.status(),
        }
    }

    /// The status as the help writes it, and what it means.
    fn row(self) -> (&'static str, &'static str) {
        match self {
            Exit::Success => ("0", "an attempt succeeded (its status is in --success-on)"),
            Exit::Flaky(_) => (
                "F",
                "--flaky-exit F: an attempt succeeded, but only after failed ones",
            ),
            Exit::GaveUp(_) => (
                "N",
                "otherwise: the last attempt's own status N, after giving up (its attempts ran \
                 out, its status or output said not to retry, the command asked to stop, the \
                 deadline or the budget left no room)",
            ),
            Exit::GaveUpAfterZero => (
                "1",
                "giving up after an attempt whose status 0 counted as a failure (--success-on \
                 without 0): a run that gives up never exits 0",
            ),
            Exit::TryLater => (
                "75",
                "no attempt: the budget's breaker was open, or another run of the job was in \
                 progress (retry job set --overlap skip) (sysexits' EX_TEMPFAIL, try again \
                 later)",
            ),
            Exit::TimedOut => (
                "124",
                "the last attempt was ended by --timeout or --max-time, or the run's deadline \
                 (--max-time, an outer run's RETRY_DEADLINE, a CI job's) passed before the first \
                 attempt, whatever else kept the run out",
            ),
            Exit::ToolFailed => (
                "125",
                "retry itself failed: bad usage; a --report it cannot use; stdin it could not \
                 read or keep for --replay-stdin; an attempt it could not start for want of \
                 descriptors, processes or memory; or output it could neither keep nor pass on \
                 (--hold stdout with no room in TMPDIR); never a budget that cannot be used, \
                 which only warns",
            ),
            Exit::CannotExecute => ("126", "COMMAND was found but could not be executed"),
            Exit::NotFound => (
                "127",
                "COMMAND, or the interpreter or loader it needs, was not found",
            ),
            Exit::AttemptKilled(_) => ("128+N", "the last attempt died of signal N"),
            Exit::Stopped(_) => (
                "128+N",
                "or retry was stopped by signal N, passed it on, and died of it too",
            ),
        }
    }
}

impl From<SpawnFailure> for Exit {
    fn from(failure: SpawnFailure) -> Exit {
        match failure {
            SpawnFailure::NotFound => Exit::NotFound,
            SpawnFailure::CannotExecute => Exit::CannotExecute,
            SpawnFailure::ToolFailed => Exit::ToolFailed,
        }
    }
}

/// The exit-status table, one `(status, meaning)` row per status, for `--help` and the man page;
/// variants that share a status share a row.
pub fn table() -> Vec<(&'static str, String)> {
    let mut rows: Vec<(&'static str, String)> = Vec::new();
    for (status, meaning) in VARIANTS.map(Exit::row) {
        match rows.last_mut() {
            Some((last, text)) if *last == status => *text = format!("{text}, {meaning}"),
            _ => rows.push((status, meaning.to_string())),
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deadline::DeadlineSource;
    use crate::outcome::{Moment, SpawnFailure};

    fn end(reason: Reason, last: Option<u8>) -> RunEnd {
        RunEnd::of(reason, 1, last.map(Termination::Exited))
    }

    #[test]
    fn a_run_ends_with_the_status_of_how_it_ended() {
        let cases = [
            (end(Reason::Success, Some(0)), 0),
            (end(Reason::Exhausted, Some(7)), 7),
            (end(Reason::Exhausted, Some(0)), 1),
            (
                end(Reason::Deadline(DeadlineSource::MaxTime), Some(124)),
                124,
            ),
            (end(Reason::Deadline(DeadlineSource::OuterRun), None), 124),
            (end(Reason::Budget(String::new()), Some(137)), 137),
            (end(Reason::OutputLost("x".into()), Some(0)), 125),
            (
                end(
                    Reason::BreakerOpen {
                        breaker: String::new(),
                        left: std::time::Duration::from_secs(1),
                        probing: false,
                    },
                    None,
                ),
                75,
            ),
            (
                end(Reason::Overlap("another run of job nightly".into()), None),
                75,
            ),
            (
                end(
                    Reason::SpawnFailed(SpawnFailure::NotFound, "x".into()),
                    Some(127),
                ),
                127,
            ),
            (
                end(Reason::Interrupted(Signal::TERM, Moment::Wait), Some(1)),
                143,
            ),
            (
                end(
                    Reason::SpawnFailed(SpawnFailure::NotFound, String::new()),
                    None,
                ),
                127,
            ),
            (
                end(
                    Reason::SpawnFailed(SpawnFailure::CannotExecute, String::new()),
                    None,
                ),
                126,
            ),
        ];
        for (end, status) in cases {
            assert_eq!(Exit::of(&end).status(), status, "{end:?}");
        }
        let mut failed_report = end(Reason::Success, Some(0));
        failed_report.report_error = Some("disk full".into());
        assert_eq!(Exit::of(&failed_report), Exit::ToolFailed);
        assert_eq!(
            Exit::of(&end(
                Reason::Interrupted(Signal::INT, Moment::Attempt),
                None
            )),
            Exit::Stopped(Signal::INT)
        );
    }

    #[test]
    fn the_table_has_a_row_per_status() {
        let statuses: Vec<&str> = table().iter().map(|(status, _)| *status).collect();
        assert_eq!(
            statuses,
            [
                "0", "F", "N", "1", "75", "124", "125", "126", "127", "128+N"
            ]
        );
        assert!(table()[9].1.contains("or retry was stopped by signal N"));
    }

    #[test]
    fn a_flaky_success_exits_the_status_asked_for() {
        let flaky = RunEnd {
            attempts: 3,
            flaky_exit: Some(3),
            ..end(Reason::Success, Some(0))
        };
        assert_eq!(Exit::of(&flaky).status(), 3);
        let failed_report = RunEnd {
            report_error: Some("disk full".into()),
            ..flaky
        };
        assert_eq!(Exit::of(&failed_report), Exit::ToolFailed);
    }
}
