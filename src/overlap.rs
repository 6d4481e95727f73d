//! One run of a job at a time: before its first attempt, a run named with `--job` takes its hold
//! on the job as the job's terms say (`retry job set NAME --overlap skip|wait`), and gives it
//! back when it ends; a run that finds another in progress makes no attempt, and exits 75 with
//! reason `overlap`. The hold itself (a lock on this machine, a lease on a shared store) is
//! `retry_budget::job`'s; this module decides what it means for the run.
//!
//! A store that cannot say whether another run is in progress does not stop the run: it is
//! said once, and the run goes on, as a run with no terms would. The job's other terms, read in
//! the same step, go on with the run.

use std::time::{Duration, Instant};

use crate::config::Config;
use crate::signals::SignalWatch;
use retry_budget::job::{self, Hold, Holding, JobTerms, Overlap, Unheld};
use retry_policy::outcome::{Moment, Reason, RunEnd};

/// What became of the run's hold on its job.
pub(crate) enum Held {
    /// The run may start: it holds the job (to give back when it ends), or holds nothing; with
    /// the job's terms (the defaults for a run with no job, or a store that could not say).
    Go(Option<Hold>, JobTerms),
    /// The run makes no attempt, and ends so.
    NoAttempt(RunEnd),
}

/// Hold the job of the run `config` describes, if it names one, waiting no later than
/// `deadline`; `warn` is told what the run goes on without.
pub(crate) fn hold(
    config: &Config,
    watch: &SignalWatch,
    deadline: Option<Instant>,
    warn: &mut dyn FnMut(String),
) -> Held {
    let Some(place) = config.history() else {
        return Held::Go(None, JobTerms::default());
    };
    let started = Instant::now();
    let run = config.run_id().to_string();
    let job = place.job.as_str();
    let reason = match job::hold(&place.location, &place.job, &run, watch, deadline) {
        Ok((Holding::Free, terms)) => return Held::Go(None, terms),
        Ok((Holding::Held(hold), terms)) => return Held::Go(Some(hold), terms),
        Ok((Holding::Busy(overlap, holder), _)) => Reason::Overlap(busy(job, overlap, holder)),
        Err(Unheld::Interrupted(signal)) => Reason::Interrupted(signal, Moment::Budget),
        Err(Unheld::Failed(why)) => {
            warn(format!(
                "job {job}: cannot tell whether another run is in progress ({why}); the run \
                 goes on as if its runs may overlap"
            ));
            return Held::Go(None, JobTerms::default());
        }
    };
    Held::NoAttempt(RunEnd {
        attempts: 0,
        last: None,
        last_unready: None,
        reason,
        elapsed: started.elapsed(),
        report_error: None,
        flaky_exit: None,
    })
}

/// Give the job back, within the time left before `deadline`; `warn` is told of a lease that
/// was lost on the way.
pub(crate) fn release(
    hold: Option<Hold>,
    watch: &SignalWatch,
    deadline: Option<Instant>,
    warn: &mut dyn FnMut(String),
) {
    let latest = deadline.map(|deadline| deadline.saturating_duration_since(Instant::now()));
    // A run at its deadline still gives its lease back, with the grace an end file gets.
    let latest = latest.map(|left| left.max(Duration::from_millis(500)));
    if let Some(why) = hold.and_then(|hold| hold.release(watch, latest)) {
        warn(why);
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
