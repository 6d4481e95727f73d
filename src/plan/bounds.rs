//! How long a whole run can take, for `--plan`: the worst case (every attempt the limits allow,
//! each at its `--timeout` and `--kill-after`, the waits at their longest, cut at the soonest
//! deadline) and, for a job with a history, how long its past runs took (as the history's
//! durations give them). Pure arithmetic on the plan's request; `mod.rs` prints it.

use std::time::Duration;

use serde::Serialize;

use retry_budget::history::Took;
use retry_policy::duration::{format_duration, to_millis};

use super::{PlanRequest, plural};

/// Waits summed one by one before the rest are counted at the cap: a bound, never an
/// underestimate, that costs a run of millions of attempts no more than this.
const WAITS_SUMMED: u64 = 1_000_000;

/// The longest a run can take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WorstCase {
    /// The most attempts the run can make: `-n`, or fewer by the rules' limits; none for no
    /// limit.
    pub(crate) attempts: Option<u64>,
    /// How long, at the most; none when nothing bounds it.
    pub(crate) total: Option<Duration>,
    /// Whether the deadline (and `--kill-after` after it) is what bounds it.
    pub(crate) cut_by_deadline: bool,
}

/// What a job's history says of how long its past runs took: the figures, none when it keeps
/// no duration yet, or why it cannot be read.
pub(crate) type PastRuns = Result<Option<Took>, String>;

impl PlanRequest<'_> {
    /// The worst case of the run this plan is for.
    pub(crate) fn worst_case(&self) -> WorstCase {
        let attempts = match (self.limit.count(), self.rules.attempt_bound()) {
            (Some(count), Some(bound)) => Some(count.min(bound)),
            (count, bound) => count.or(bound),
        };
        let uncut = attempts
            .zip(self.attempt_time)
            .map(|(attempts, each)| self.uncut(attempts, each));
        let deadline = self
            .max_time
            .map(|left| left.saturating_add(self.kill_after));
        let (total, cut_by_deadline) = match (uncut, deadline) {
            (Some(total), Some(deadline)) if deadline < total => (Some(deadline), true),
            (None, Some(deadline)) => (Some(deadline), true),
            (total, _) => (total, false),
        };
        WorstCase {
            attempts,
            total,
            cut_by_deadline,
        }
    }

    /// The splay, `attempts` attempts of `each`, and the longest waits between them.
    fn uncut(&self, attempts: u64, each: Duration) -> Duration {
        let nanos = |duration: Duration| duration.as_nanos();
        let mut total = nanos(self.splay) + nanos(each) * u128::from(attempts);
        let retries = attempts.saturating_sub(1);
        let summed = retries.min(WAITS_SUMMED);
        total += self
            .backoff
            .longest_waits()
            .take(summed as usize)
            .map(nanos)
            .sum::<u128>();
        total += nanos(self.backoff.cap()) * u128::from(retries - summed);
        const NANOS: u128 = 1_000_000_000;
        match u64::try_from(total / NANOS) {
            Ok(seconds) => Duration::new(seconds, (total % NANOS) as u32),
            Err(_) => Duration::MAX,
        }
    }
}

/// The worst case in words, for the text plan.
pub(crate) fn describe(request: &PlanRequest, worst: &WorstCase) -> String {
    let bounded_by = match (worst.cut_by_deadline, &request.deadline) {
        (true, Some(deadline)) => format!(", cut by the deadline ({deadline})"),
        (true, None) => ", cut by --max-time".to_string(),
        (false, _) => String::new(),
    };
    let kill_after = format_duration(request.kill_after);
    match (worst.total, worst.attempts, request.attempt_time) {
        (Some(total), _, _) if worst.cut_by_deadline => format!(
            "worst case: {}{bounded_by}, and --kill-after ({kill_after}) for the attempt it cuts",
            format_duration(total)
        ),
        (Some(total), Some(attempts), Some(each)) => format!(
            "worst case: {}: {attempts} {} of at most {} each (--timeout and --kill-after), \
             the waits at their longest",
            format_duration(total),
            plural(attempts, "attempt", "attempts"),
            format_duration(each)
        ),
        (_, None, _) => "worst case: none; attempts are unlimited and the run has no deadline \
                         (--max-time bounds it)"
            .to_string(),
        _ => "worst case: none; an attempt has no time limit and the run no deadline \
              (--timeout or --max-time bounds it)"
            .to_string(),
    }
}

/// The past runs of the job `job` in words, for the text plan.
pub(crate) fn describe_past(job: &str, past: &PastRuns) -> String {
    match past {
        Ok(Some(took)) => format!(
            "job {job}'s last {} {} took {} (median), {} (95th percentile)",
            took.runs,
            plural(took.runs as u64, "run", "runs"),
            format_duration(took.median),
            format_duration(took.p95)
        ),
        Ok(None) => format!("job {job}: no past run's duration is kept yet"),
        Err(why) => format!("job {job}'s past runs: {why}"),
    }
}

/// The worst case in the JSON plan.
#[derive(Serialize)]
pub(crate) struct WorstCaseJson {
    total_ms: f64,
    attempts: Option<u64>,
    cut_by_deadline: bool,
}

impl WorstCaseJson {
    /// The JSON of `worst`; none when nothing bounds the run.
    pub(crate) fn of(worst: &WorstCase) -> Option<Self> {
        Some(WorstCaseJson {
            total_ms: to_millis(worst.total?),
            attempts: worst.attempts,
            cut_by_deadline: worst.cut_by_deadline,
        })
    }
}

/// The past runs in the JSON plan.
#[derive(Serialize)]
pub(crate) struct PastRunsJson {
    runs: usize,
    p50_ms: f64,
    p95_ms: f64,
}

impl PastRunsJson {
    /// The JSON of `past`; none when there are no figures.
    pub(crate) fn of(past: &PastRuns) -> Option<Self> {
        let took = past.as_ref().ok()?.as_ref()?;
        Some(PastRunsJson {
            runs: took.runs,
            p50_ms: to_millis(took.median),
            p95_ms: to_millis(took.p95),
        })
    }
}
