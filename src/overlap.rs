//! One run of a job at a time: before its first attempt, a run named with `--job` takes its hold
//! on the job as the job's terms say (`retry job set NAME --overlap skip|wait`), and gives it
//! back when it ends; a run that finds another in progress makes no attempt, and exits 75 with
//! reason `overlap`. The hold itself (a lock on this machine, a lease on a shared store) is
//! `retry_budget::job`'s; this module decides what it means for the run.
//!
//! A store that cannot say whether another run is in progress does not stop the run: it is
//! said once, and the run goes on, as a run with no terms would. The job's other terms, read in
//! the same step, go on with the run.

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::signals::SignalWatch;
use retry_budget::job::{self, Hold, Holding, JobTerms, Overlap, Unheld};
use retry_policy::run::{JobGate, JobTaken};

/// A run's hold on its job: taken, as the loop asks, before the first attempt; given back when
/// the run ends.
pub(crate) struct JobHold<'r> {
    config: &'r Config,
    watch: &'r SignalWatch,
    /// What the run holds, once it took it.
    hold: Option<Hold>,
    /// The job's terms, read as the hold was taken (the defaults until then, for a run with
    /// no job, or a store that could not say), shared with what the run tells them to.
    terms: SharedTerms,
}

/// A job's terms as its run read them, shared by the hold that reads them and the observers of
/// the run that obey them (its pings).
pub(crate) type SharedTerms = Rc<Cell<JobTerms>>;

impl<'r> JobHold<'r> {
    /// The hold of the run `config` describes, on its job if it names one.
    pub(crate) fn new(config: &'r Config, watch: &'r SignalWatch) -> JobHold<'r> {
        JobHold {
            config,
            watch,
            hold: None,
            terms: SharedTerms::default(),
        }
    }

    /// The job's terms, as they are read when the hold is taken.
    pub(crate) fn terms(&self) -> SharedTerms {
        Rc::clone(&self.terms)
    }
}

impl JobGate for JobHold<'_> {
    fn take(&mut self, until: Option<Instant>, warn: &mut dyn FnMut(String)) -> JobTaken {
        let Some(place) = self.config.history() else {
            return JobTaken::Go;
        };
        let run = self.config.run_id().to_string();
        let job = place.job.as_str();
        match job::hold(&place.location, &place.job, &run, self.watch, until) {
            Ok((holding, terms)) => {
                self.terms.set(terms);
                match holding {
                    Holding::Free => JobTaken::Go,
                    Holding::Held(hold) => {
                        self.hold = Some(hold);
                        JobTaken::Go
                    }
                    Holding::Busy(overlap, holder) => JobTaken::Busy(busy(job, overlap, holder)),
                }
            }
            Err(Unheld::Interrupted(signal)) => JobTaken::Interrupted(signal),
            Err(Unheld::Failed(why)) => {
                warn(format!(
                    "job {job}: cannot tell whether another run is in progress ({why}); the run \
                     goes on as if its runs may overlap"
                ));
                JobTaken::Go
            }
        }
    }
}

impl JobHold<'_> {
    /// Give the job back, within the time left before `deadline`; `warn` is told of a lease that
    /// was lost on the way.
    pub(crate) fn release(self, deadline: Option<Instant>, warn: &mut dyn FnMut(String)) {
        let latest = deadline.map(|deadline| deadline.saturating_duration_since(Instant::now()));
        // A run at its deadline still gives its lease back, with the grace an end file gets.
        let latest = latest.map(|left| left.max(Duration::from_millis(500)));
        if let Some(why) = self.hold.and_then(|hold| hold.release(self.watch, latest)) {
            warn(why);
        }
    }
}

/// Why a run of `job`, which another run holds, makes no attempt.
fn busy(job: &str, overlap: Overlap, holder: Option<String>) -> String {
    let holder = holder.map_or(String::new(), |holder| format!(" ({holder})"));
    match overlap {
        Overlap::Wait => {
            format!("another run of job {job}{holder} was still in progress at the deadline")
        }
        _ => format!("another run of job {job}{holder} is in progress"),
    }
}
