//! Where a run's deadline comes from, and which one applies: `--max-time`, the deadline of the
//! run whose attempt this run is inside (its `RETRY_DEADLINE`), or the time limit of the CI job
//! the run is in, less a margin in which the run still ends on its own terms (its report,
//! annotation and metrics written) before the job is killed. The soonest applies.
//!
//! Pure: the wall clock's reading is passed in, and what comes back is a span from now, which
//! the run counts on its monotonic clock, so that a clock that jumps later (NTP, a VM resumed)
//! moves nothing. The values come from the environment, so each is checked: one that is not a
//! time is refused with a message that says what was expected, and the run goes on without it.

use std::fmt;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::duration::format_duration;
use crate::error::Error;
use crate::timestamp;

/// Where the deadline in force came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DeadlineSource {
    /// `--max-time`.
    MaxTime,
    /// The outer run's `RETRY_DEADLINE`: this run is inside one of its attempts.
    OuterRun,
    /// GitLab's job time limit: `CI_JOB_TIMEOUT` seconds from `CI_JOB_STARTED_AT`.
    GitlabJob,
    /// Buildkite's `BUILDKITE_TIMEOUT` minutes, counted from this run's start: Buildkite does
    /// not say when the job started.
    BuildkiteJob,
    /// The next slot of the schedule of the run's `--job` (`retry job set --schedule`): the run
    /// ends before the next one is due.
    Schedule,
}

/// The deadline in force: how long the run has from now, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deadline {
    /// The time the run has, from now.
    pub left: Duration,
    /// Where the limit came from.
    pub source: DeadlineSource,
}

/// The deadline of a run, as the run counts it: the instant it falls at on the run's monotonic
/// clock, read once, and where it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    /// When it falls.
    pub at: Instant,
    /// Where it came from.
    pub source: DeadlineSource,
}

impl Limit {
    /// The time left before it at `now` (none once it has passed).
    pub fn left(self, now: Instant) -> Duration {
        self.at.saturating_duration_since(now)
    }
}

impl Deadline {
    /// The deadline as the instant it falls at, `left` from `now`; none when that instant is
    /// past what the clock can hold (no limit in practice).
    pub fn from(self, now: Instant) -> Option<Limit> {
        Some(Limit {
            at: now.checked_add(self.left)?,
            source: self.source,
        })
    }
}

/// A CI job's time limit, as the job's environment tells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobLimit {
    /// GitLab's or Buildkite's.
    pub source: DeadlineSource,
    /// How long the job may run.
    pub limit: Duration,
    /// How long it has run.
    pub elapsed: Duration,
}

/// How long past the run's deadline the tool may still take to finish what it owes: its last
/// output, its report files, the job's history, and a breaker's count (a probe's lease given
/// back).
pub const GRACE: Duration = Duration::from_millis(50);

/// The least margin a run keeps before its job's time limit.
const LEAST_MARGIN: Duration = Duration::from_secs(5);
/// The most margin a run keeps before its job's time limit.
const MOST_MARGIN: Duration = Duration::from_secs(60);

/// The latest deadline any value may give: a year from now. A later one is no limit at all in
/// practice, and a value of centuries is more likely damage than meant.
const LATEST: Duration = Duration::from_secs(366 * 86_400);

impl JobLimit {
    /// The margin the run keeps before the job's time limit: a twentieth of it, from 5 s to a
    /// minute; time enough to write its files and for the job's own cleanup to start.
    pub fn margin(&self) -> Duration {
        (self.limit / 20).clamp(LEAST_MARGIN, MOST_MARGIN)
    }

    /// The time the run has before the job's limit, less the margin (none when it is past).
    pub fn left(&self) -> Duration {
        self.limit
            .saturating_sub(self.elapsed)
            .saturating_sub(self.margin())
    }
}

/// The soonest of the deadlines given, if any: `--max-time`, the outer run's (as the time left
/// until it), the CI job's, and the next slot of the job's schedule (as the time left until it).
pub fn soonest(
    max_time: Option<Duration>,
    outer: Option<Duration>,
    job: Option<JobLimit>,
    slot: Option<Duration>,
) -> Option<Deadline> {
    let candidates = [
        max_time.map(|left| (left, DeadlineSource::MaxTime)),
        outer.map(|left| (left, DeadlineSource::OuterRun)),
        job.map(|job| (job.left(), job.source)),
        slot.map(|left| (left, DeadlineSource::Schedule)),
    ];
    candidates
        .into_iter()
        .flatten()
        .min_by_key(|(left, _)| *left)
        .map(|(left, source)| Deadline { left, source })
}

/// An outer run's `RETRY_DEADLINE` (Unix milliseconds) as the time left until it at `now`;
/// zero when it has passed.
pub fn outer_deadline(text: &str, now: SystemTime) -> Result<Duration, Error> {
    let millis: u64 = whole(text).ok_or_else(|| Error::OuterDeadlineNotATime(text.to_string()))?;
    let at = UNIX_EPOCH + Duration::from_millis(millis);
    let left = at.duration_since(now).unwrap_or_default();
    match left <= LATEST {
        true => Ok(left),
        false => Err(Error::OuterDeadlineTooFar(text.to_string())),
    }
}

/// GitLab's job time limit from `CI_JOB_TIMEOUT` (seconds) and `CI_JOB_STARTED_AT` (an RFC 3339
/// time in any of its forms, e.g. `2026-11-26T09:00:00Z` or `2026-11-26T10:00:00+01:00`), at
/// `now`.
pub fn gitlab_job(timeout: &str, started_at: &str, now: SystemTime) -> Result<JobLimit, Error> {
    let limit = seconds(timeout).ok_or_else(|| Error::GitlabTimeout {
        value: timeout.to_string(),
        most: LATEST.as_secs(),
    })?;
    let started =
        timestamp::parse(started_at).ok_or_else(|| Error::GitlabStart(started_at.to_string()))?;
    Ok(JobLimit {
        source: DeadlineSource::GitlabJob,
        limit,
        elapsed: now.duration_since(started).unwrap_or_default(),
    })
}

/// Buildkite's job time limit from `BUILDKITE_TIMEOUT` (minutes; `false` for none), counted from
/// now; none when the job has no limit.
pub fn buildkite_job(timeout: &str) -> Result<Option<JobLimit>, Error> {
    if timeout == "false" || timeout.is_empty() {
        return Ok(None);
    }
    let minutes = whole(timeout)
        .filter(|minutes| (1..=LATEST.as_secs() / 60).contains(minutes))
        .ok_or_else(|| Error::BuildkiteTimeout {
            value: timeout.to_string(),
            most: LATEST.as_secs() / 60,
        })?;
    Ok(Some(JobLimit {
        source: DeadlineSource::BuildkiteJob,
        limit: Duration::from_secs(minutes * 60),
        elapsed: Duration::ZERO,
    }))
}

/// A whole number of seconds from 1 up to a year.
fn seconds(text: &str) -> Option<Duration> {
    whole(text)
        .filter(|seconds| (1..=LATEST.as_secs()).contains(seconds))
        .map(Duration::from_secs)
}

/// Digits only, as a number; none for anything else (a sign, a space, a fraction, an overflow).
fn whole(text: &str) -> Option<u64> {
    match !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit()) {
        true => text.parse().ok(),
        false => None,
    }
}

/// A deadline `left` from `now` as `RETRY_DEADLINE` gives it: the Unix time in milliseconds, on
/// the wall clock as it reads now (at most `u64::MAX`, some 584 million years on).
pub fn exported(left: Duration, now: SystemTime) -> u64 {
    let at = now.checked_add(left).unwrap_or(now);
    let millis = at
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    u64::try_from(millis).unwrap_or(u64::MAX)
}

impl fmt::Display for DeadlineSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeadlineSource::MaxTime => "--max-time",
            DeadlineSource::OuterRun => "the outer retry's deadline (RETRY_DEADLINE)",
            DeadlineSource::GitlabJob => {
                "the GitLab job's time limit (CI_JOB_TIMEOUT from CI_JOB_STARTED_AT)"
            }
            DeadlineSource::BuildkiteJob => {
                "the Buildkite job's time limit (BUILDKITE_TIMEOUT, from this run's start)"
            }
            DeadlineSource::Schedule => "the next slot of the job's schedule",
        })
    }
}

impl Deadline {
    /// Which limit applies and where it came from, for `--plan` and `-v`.
    pub fn describe(&self, job: Option<&JobLimit>) -> String {
        let left = format_duration(self.left);
        match (self.source, job) {
            (DeadlineSource::GitlabJob | DeadlineSource::BuildkiteJob, Some(job)) => format!(
                "{left}, from {} ({} with {} gone), less a margin of {}",
                self.source,
                format_duration(job.limit),
                format_duration(job.elapsed),
                format_duration(job.margin())
            ),
            (source, _) => format!("{left}, from {source}"),
        }
    }
}

/// The latest moment a run that has ended, at `now`, may spend telling a service outside of it
/// (a monitor, a trace collector): `limit` from now, but no later than its `deadline`'s grace,
/// and only the grace once a signal ended it (`interrupted`), which must end it soon.
pub fn telling_limit(
    now: Instant,
    limit: Duration,
    deadline: Option<Instant>,
    interrupted: bool,
) -> Instant {
    let mut until = now + limit;
    if let Some(deadline) = deadline {
        until = until.min(deadline.max(now) + GRACE);
    }
    match interrupted {
        true => until.min(now + GRACE),
        false => until,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn telling_a_service_outside_stays_within_the_deadline_and_a_signal() {
        let now = Instant::now();
        let limit = Duration::from_secs(10);
        assert_eq!(telling_limit(now, limit, None, false), now + limit);
        let soon = now + Duration::from_secs(1);
        assert_eq!(telling_limit(now, limit, Some(soon), false), soon + GRACE);
        let past = now - Duration::from_secs(1);
        assert_eq!(telling_limit(now, limit, Some(past), false), now + GRACE);
        assert_eq!(telling_limit(now, limit, None, true), now + GRACE);
    }

    fn at(seconds: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(seconds)
    }

    const NOW: u64 = 1_800_000_000;

    #[test]
    fn the_soonest_deadline_applies() {
        let job = JobLimit {
            source: DeadlineSource::GitlabJob,
            limit: Duration::from_secs(60),
            elapsed: Duration::from_secs(50),
        };
        let soonest = |max: u64, outer: u64, slot: u64| {
            soonest(
                Some(Duration::from_secs(max)),
                Some(Duration::from_secs(outer)),
                Some(job),
                Some(Duration::from_secs(slot)),
            )
            .map(|deadline| (deadline.left.as_secs(), deadline.source))
        };
        assert_eq!(soonest(3, 9, 9), Some((3, DeadlineSource::MaxTime)));
        assert_eq!(soonest(9, 4, 9), Some((4, DeadlineSource::OuterRun)));
        // 10 s left of the job, less its margin of 5 s.
        assert_eq!(soonest(9, 9, 9), Some((5, DeadlineSource::GitlabJob)));
        assert_eq!(soonest(9, 9, 2), Some((2, DeadlineSource::Schedule)));
        assert_eq!(super::soonest(None, None, None, None), None);
    }

    #[test]
    fn a_jobs_margin_is_a_twentieth_of_its_limit_from_five_seconds_to_a_minute() {
        let margin = |limit: u64| {
            let job = JobLimit {
                source: DeadlineSource::BuildkiteJob,
                limit: Duration::from_secs(limit),
                elapsed: Duration::ZERO,
            };
            job.margin().as_secs()
        };
        assert_eq!((margin(60), margin(600), margin(3600 * 6)), (5, 30, 60));
    }

    #[test]
    fn an_outer_deadline_is_the_time_left_until_it() {
        let ms = |seconds: u64| (seconds * 1000).to_string();
        let outer = |text: &str| outer_deadline(text, at(NOW));
        assert_eq!(outer(&ms(NOW + 30)), Ok(Duration::from_secs(30)));
        assert_eq!(outer(&ms(NOW - 30)), Ok(Duration::ZERO));
        for bad in ["", "-5", "12.5", " 1", "1e12", "99999999999999999999999"] {
            assert!(
                outer(bad).unwrap_err().to_string().contains("not a time"),
                "{bad}"
            );
        }
        let far = outer(&ms(NOW + 400 * 86_400)).unwrap_err().to_string();
        assert!(far.contains("more than a year ahead"), "{far}");
    }

    #[test]
    fn a_gitlab_job_counts_from_its_start() {
        // NOW is 2027-01-15T08:00:00Z.
        let job = gitlab_job("60", "2027-01-15T07:59:10Z", at(NOW)).unwrap();
        assert_eq!(
            (job.limit, job.elapsed),
            (Duration::from_secs(60), Duration::from_secs(50))
        );
        let ahead = gitlab_job("60", "2099-01-01T00:00:00Z", at(NOW)).unwrap();
        assert_eq!(
            ahead.elapsed,
            Duration::ZERO,
            "a start ahead of now counts as now"
        );
        assert!(gitlab_job("1h", "2027-01-15T08:00:00Z", at(NOW)).is_err());
        assert!(gitlab_job("0", "2027-01-15T08:00:00Z", at(NOW)).is_err());
        assert!(gitlab_job("60", "yesterday", at(NOW)).is_err());
        let offset = gitlab_job("60", "2027-01-15T08:59:10+01:00", at(NOW)).unwrap();
        assert_eq!(
            offset.elapsed,
            Duration::from_secs(50),
            "a GitLab instance not on UTC writes its offset"
        );
    }

    #[test]
    fn a_buildkite_job_counts_from_the_run_and_false_is_none() {
        let job = buildkite_job("10").unwrap().unwrap();
        assert_eq!(
            (job.limit, job.elapsed),
            (Duration::from_secs(600), Duration::ZERO)
        );
        assert_eq!(buildkite_job("false"), Ok(None));
        assert!(buildkite_job("ten").is_err());
    }

    #[test]
    fn the_exported_deadline_follows_the_wall_clock() {
        let left = Duration::from_millis(2_500);
        assert_eq!(exported(left, at(NOW)), NOW * 1000 + 2_500);
        // The same time left, read after the wall clock jumped an hour ahead.
        let jumped = at(NOW + 3600);
        assert_eq!(exported(left, jumped), (NOW + 3600) * 1000 + 2_500);
    }

    #[test]
    fn the_description_says_where_the_limit_came_from() {
        let job = JobLimit {
            source: DeadlineSource::GitlabJob,
            limit: Duration::from_secs(60),
            elapsed: Duration::from_secs(50),
        };
        let deadline = soonest(None, None, Some(job), None).unwrap();
        assert_eq!(
            deadline.describe(Some(&job)),
            "5s, from the GitLab job's time limit (CI_JOB_TIMEOUT from CI_JOB_STARTED_AT) \
             (1m with 50s gone), less a margin of 5s"
        );
        let outer = soonest(None, Some(Duration::from_secs(7)), None, None).unwrap();
        assert_eq!(
            outer.describe(None),
            "7s, from the outer retry's deadline (RETRY_DEADLINE)"
        );
    }
}
