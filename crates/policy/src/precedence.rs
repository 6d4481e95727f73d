//! Which end a run has when more than one thing would keep it from starting or going on: its
//! deadline, a signal, another run of its job, its budget's breaker, its budget, a request of
//! the command's. The rule is one table, [`PRECEDENCE`], and one function, [`decide`]: the run
//! gathers the ends it found at a moment and asks [`decide`] which one is its end, so that the
//! order in which the checks happen to be made never decides. `docs/reference.md` prints the
//! table from [`Obstacle::row`].
//!
//! The deadline comes first: a caller with no time left is told so (124), never to try again
//! later (75). A signal comes next, for the run must end on it. Then what keeps the run out for
//! now (another run of its job, then an open breaker: the job's hold is taken first, so that a
//! run its own job kept out never counts against the breaker), then what ends a run that has
//! started (a budget with no token for the retry, then the command's own request).

/// What can keep a run from starting its first attempt, or from going on to the next one; in
/// the order of precedence, the first one found deciding the run's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Obstacle {
    /// The run's deadline has passed, or the wait before the next attempt would reach it.
    Deadline,
    /// A signal that ends a run arrived.
    Signal,
    /// Another run of the job holds it (`--overlap skip`, or `wait` until the deadline).
    Job,
    /// The budget's breaker is open, or half open with another run as its probe.
    Breaker,
    /// The budget has no token for the retry: a named budget none within `--cap` (the
    /// machine's default budget waits for its token instead).
    Budget,
    /// The command asked not to be retried.
    Request,
}

/// Every obstacle, in the order of precedence: the first one a run found is its end.
pub const PRECEDENCE: [Obstacle; 6] = [
    Obstacle::Deadline,
    Obstacle::Signal,
    Obstacle::Job,
    Obstacle::Breaker,
    Obstacle::Budget,
    Obstacle::Request,
];

/// A row of the precedence table, as the reference prints it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// What keeps the run from starting or going on.
    pub obstacle: &'static str,
    /// The exit status it ends with.
    pub status: &'static str,
    /// The `done` event's `reason`.
    pub reason: &'static str,
    /// Whether its monitor is told of a failure, and its job's history counts it.
    pub failure_of_the_job: &'static str,
}

impl Obstacle {
    /// Its row of the reference's table.
    pub fn row(self) -> Row {
        let (obstacle, status, reason, failure_of_the_job) = match self {
            Obstacle::Deadline => (
                "its deadline (`--max-time`, `RETRY_DEADLINE`, a CI job's) has passed, or the \
                 next wait would reach it",
                "124, or the last attempt's status once one ran",
                "deadline",
                "yes",
            ),
            Obstacle::Signal => (
                "a signal that ends a run (SIGINT, SIGTERM, SIGHUP, ...)",
                "128+N",
                "interrupted",
                "no: the run did not end by itself",
            ),
            Obstacle::Job => (
                "another run of its job is in progress (`--overlap skip`, or `wait` up to the \
                 deadline)",
                "75",
                "overlap",
                "no: a log entry where the monitor keeps one; not counted toward \
                 `--alert-after`, not in the job's history",
            ),
            Obstacle::Breaker => (
                "its budget's breaker is open, or half open with another run as its probe",
                "75",
                "breaker_open",
                "yes",
            ),
            Obstacle::Budget => (
                "its budget has no token for the retry (a named budget: none within `--cap`; \
                 the default budget waits for one)",
                "the last attempt's status",
                "budget",
                "yes",
            ),
            Obstacle::Request => (
                "the command asked not to be retried (`stop` in `RETRY_AFTER_FILE`)",
                "the last attempt's status",
                "stop_requested",
                "yes",
            ),
        };
        Row {
            obstacle,
            status,
            reason,
            failure_of_the_job,
        }
    }
}

/// Of the ends a run `found` at one moment, each with the obstacle it comes from, the one whose
/// obstacle comes first in [`PRECEDENCE`].
pub fn decide<T>(found: impl IntoIterator<Item = (Obstacle, T)>) -> Option<T> {
    found
        .into_iter()
        .min_by_key(|(obstacle, _)| *obstacle)
        .map(|(_, end)| end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_the_order_of_the_variants_and_names_each_once() {
        let mut sorted = PRECEDENCE;
        sorted.sort();
        assert_eq!(sorted, PRECEDENCE);
        let reasons: std::collections::HashSet<&str> = PRECEDENCE
            .iter()
            .map(|obstacle| obstacle.row().reason)
            .collect();
        assert_eq!(reasons.len(), PRECEDENCE.len());
    }

    #[test]
    fn the_deadline_decides_over_everything_and_each_over_those_after_it() {
        for (place, earlier) in PRECEDENCE.iter().enumerate() {
            for later in &PRECEDENCE[place..] {
                let found = [(*later, "later"), (*earlier, "earlier")];
                let expected = if later == earlier { "later" } else { "earlier" };
                assert_eq!(decide(found), Some(expected), "{earlier:?} and {later:?}");
            }
        }
        assert_eq!(decide(Vec::<(Obstacle, ())>::new()), None);
        let all = PRECEDENCE
            .iter()
            .rev()
            .map(|obstacle| (*obstacle, *obstacle));
        assert_eq!(decide(all), Some(Obstacle::Deadline));
    }
}
