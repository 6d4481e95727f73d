//! What every file written when the run ends has in common (`--report`'s JSON, dotenv,
//! Prometheus and JUnit files, GitHub's step outputs): it follows the run's events, is written
//! once for the run's end, its reader's pace allowing until the run's deadline and awake to the
//! signals that end a run, and may show the job's runs as its history counts them.

use std::time::Instant;

use crate::report::target::ReportError;
use retry_budget::history::Counts;
use retry_policy::events::EventSink;
use retry_policy::outcome::RunEnd;
use retry_process::signals::SignalWatch;

/// A file written when the run ends, from the events it followed.
pub(crate) trait EndFile: EventSink {
    /// The job's runs, as its history counts them; only a file that shows them keeps them.
    fn count_runs(&mut self, _runs: Counts) {}

    /// Write the file for the run that ended as `end`, its reader's pace allowing until
    /// `deadline` (the run's), and awake to the signals that end a run.
    fn write(
        self: Box<Self>,
        end: &RunEnd,
        watch: &SignalWatch,
        deadline: Option<Instant>,
    ) -> Result<(), ReportError>;
}
