//! A job's history as an observer of its runs: each run that ends is counted (clean, flaky or
//! failed, as `retry_policy::job_end` says, with how long it took) where the job's terms are kept, within the run's
//! deadline and the grace its end files get; what the count says (its failed runs in a row,
//! its totals) is what the later stages show and tolerate.

use std::time::Instant;

use crate::lifecycle::{Ending, Observer, Stage};
use crate::options::HistoryPlace;
use crate::report::outlet::GRACE;
use retry_budget::history::{self, RunKind, Unkept};
use retry_policy::causes::WithCauses;
use retry_policy::job_end::{self, Counted};
use retry_policy::outcome::Moment;

/// The history of the job a run is one of.
pub(crate) struct JobHistory<'c> {
    place: &'c HistoryPlace,
}

impl<'c> JobHistory<'c> {
    /// The history kept at `place`.
    pub(crate) fn at(place: &'c HistoryPlace) -> Self {
        JobHistory { place }
    }
}

impl Observer for JobHistory<'_> {
    fn stage(&self) -> Stage {
        Stage::Count
    }

    fn finish(self: Box<Self>, ending: &mut Ending<'_>) {
        let place = self.place;
        let kind = match job_end::counted(&ending.end) {
            Some(Counted::Clean) => RunKind::Clean,
            Some(Counted::Flaky) => RunKind::Flaky,
            Some(Counted::Failed) => RunKind::Failed,
            None => return,
        };
        // A run its deadline ended still counts: the history gets the grace the end files get.
        let latest = ending
            .deadline
            .map(|deadline| deadline.saturating_duration_since(Instant::now()) + GRACE);
        let job = place.job.as_str();
        let run = (kind, ending.end.elapsed);
        match history::record(&place.location, &place.job, run, ending.watch, latest) {
            Ok(recorded) => {
                let counts = recorded.history.totals;
                ending.counted = Some((recorded.history.failed_in_a_row(), counts));
                if let Some(why) = recorded.started_over {
                    ending.warn(format!("job {job}: {why}"));
                }
            }
            Err(Unkept::Failed(why)) => ending.warn(format!(
                "cannot keep the history of job {job} in {}: {}; the run is as it was",
                place.location,
                WithCauses(&why)
            )),
            // The run ends by the signal, as it would have a moment later without the history.
            Err(Unkept::Interrupted(signal)) => ending.interrupted(signal, Moment::History),
        }
    }
}
