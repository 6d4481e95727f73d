//! What a run takes from the environment beside its budget: the longest wait a command may ask
//! for, the deadlines from outside (an outer run's, a CI job's), what a nested run does, the
//! machine's name, and a seed's entropy. Each value is checked; one that is not what it should
//! be is refused, or, for a deadline, said and left out.

use std::ffi::OsString;
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use retry_budget::job::Slot;
use retry_policy::choice::Choice;
use retry_policy::deadline::{self as deadlines, Deadline, JobLimit, Limit};
use retry_policy::duration::parse_duration;
use retry_policy::nesting::Nested;
use retry_policy::printable::printable;
use retry_policy::run_id::RunId;
use retry_policy::seed::split_mix;

use super::ConfigError;
use crate::environment;
use crate::report::ci::CiSystem;
use crate::report::ci::outputs::GitHubFiles;
use crate::trace::Tracing;

/// The longest wait a command may ask for, unless `RETRY_MAX_REQUESTED_WAIT` says otherwise.
pub(super) const MAX_REQUESTED_WAIT: Duration = Duration::from_secs(15 * 60);

/// `RETRY_MAX_REQUESTED_WAIT`, read through `env`: the longest wait a command may ask for.
pub(super) fn max_requested_wait(
    env: &impl Fn(&str) -> Option<OsString>,
) -> Result<Duration, ConfigError> {
    let variable = environment::MAX_REQUESTED_WAIT.name;
    let Some(value) = environment::MAX_REQUESTED_WAIT.given(env) else {
        return Ok(MAX_REQUESTED_WAIT);
    };
    let text = value.to_string_lossy();
    match parse_duration(&text) {
        Ok(wait) if !wait.is_zero() => Ok(wait),
        Ok(_) => Err(ConfigError(format!(
            "{variable} (0s) must be more than 0s, e.g. 15m; to bound the whole run, give \
             --max-time"
        ))),
        Err(why) => Err(ConfigError(format!(
            "{variable} '{}': {why}",
            printable(&text)
        ))),
    }
}

/// The run's deadline: the soonest of `--max-time`, an outer run's, the CI job's and the next slot
/// of the job's schedule, read once.
#[derive(Debug)]
pub(super) struct Deadlines {
    /// It, as the time it leaves when the run was resolved.
    pub(super) soonest: Option<Deadline>,
    /// It, as the instant it falls at, from the same reading of the clocks: the one value the
    /// run and what is written after it count to.
    pub(super) at: Option<Limit>,
    /// The CI job's time limit, when the environment tells one.
    pub(super) job: Option<JobLimit>,
    /// The next slot of the schedule of the run's job, when it has one.
    pub(super) slot: Option<Slot>,
    /// What was wrong with a deadline the environment gave, which the run goes on without.
    pub(super) problems: Vec<String>,
}

impl Deadlines {
    /// The deadline of a run of `max_time` (`--max-time`) whose job's schedule has the next
    /// slot `slot`, with those `env` gives, at `now`.
    pub(super) fn of(
        max_time: Option<Duration>,
        slot: Option<Slot>,
        env: &impl Fn(&str) -> Option<OsString>,
        now: SystemTime,
    ) -> Deadlines {
        let (outer, job, problems) = outside_deadlines(env, now);
        let soonest = deadlines::soonest(max_time, outer, job, slot.as_ref().map(|slot| slot.left));
        Deadlines {
            soonest,
            at: soonest.and_then(|deadline| deadline.from(Instant::now())),
            job,
            slot,
            problems,
        }
    }
}

/// GitHub's files for the run's outcome, where the run is in GitHub Actions (`ci`).
pub(super) fn github_files(
    ci: Option<CiSystem>,
    env: &impl Fn(&str) -> Option<OsString>,
) -> GitHubFiles {
    if ci != Some(CiSystem::GitHub) {
        return GitHubFiles::default();
    }
    GitHubFiles {
        output: environment::GITHUB_OUTPUT.given(env).map(PathBuf::from),
        summary: environment::GITHUB_STEP_SUMMARY
            .given(env)
            .map(PathBuf::from),
    }
}

/// The deadlines the environment gives, read through `env` at `now`: the time left until an
/// outer run's `RETRY_DEADLINE`, and the CI job's time limit (GitLab's, else Buildkite's); and
/// what was wrong with any value, which is then left out.
fn outside_deadlines(
    env: &impl Fn(&str) -> Option<OsString>,
    now: SystemTime,
) -> (Option<Duration>, Option<JobLimit>, Vec<String>) {
    let text = |variable: environment::Variable| {
        variable
            .given(env)
            .map(|value| value.to_string_lossy().into_owned())
    };
    let mut problems = Vec::new();
    let outer = text(environment::OUTER_DEADLINE).and_then(|value| {
        let read = deadlines::outer_deadline(&value, now)
            .map_err(|why| format!("{}: {why}", environment::OUTER_DEADLINE.name));
        kept(read, &mut problems)
    });
    let gitlab = match (
        text(environment::CI_JOB_TIMEOUT),
        text(environment::CI_JOB_STARTED_AT),
    ) {
        (Some(timeout), Some(started)) => kept(
            deadlines::gitlab_job(&timeout, &started, now),
            &mut problems,
        ),
        _ => None,
    };
    let job = match gitlab {
        Some(job) => Some(job),
        None => text(environment::BUILDKITE_TIMEOUT)
            .and_then(|value| kept(deadlines::buildkite_job(&value), &mut problems).flatten()),
    };
    (outer, job, problems)
}

/// The value `read` gave, or none with what was wrong added to `problems`.
fn kept<T>(read: Result<T, impl fmt::Display>, problems: &mut Vec<String>) -> Option<T> {
    read.map_err(|why| problems.push(format!("{why}; going on without it")))
        .ok()
}

/// `RETRY_NESTED`, read through `env`: what a run inside another retry's attempt does.
pub(super) fn nested(env: &impl Fn(&str) -> Option<OsString>) -> Result<Nested, ConfigError> {
    let variable = environment::NESTED.name;
    let Some(value) = environment::NESTED.given(env) else {
        return Ok(Nested::default());
    };
    let text = value.to_string_lossy();
    Nested::named(&text).ok_or_else(|| {
        ConfigError(format!(
            "{variable} '{}' is not once, retry or quiet",
            printable(&text)
        ))
    })
}

/// The name this machine goes by, for `--seed host` and a shared budget's breaker:
/// `RETRY_HOST`, else its host name (empty if it has none).
pub(super) fn host_name(env: &impl Fn(&str) -> Option<OsString>) -> Vec<u8> {
    match environment::HOST.given(env) {
        Some(name) => name.as_bytes().to_vec(),
        None => nix::unistd::gethostname()
            .map(|name| name.as_bytes().to_vec())
            .unwrap_or_default(),
    }
}

/// The run's identity: an outer run's `RETRY_RUN_ID`, read through `env`, when it is one a run
/// makes; else a new one, from the operating system's entropy.
pub(super) fn run_id(env: &impl Fn(&str) -> Option<OsString>) -> RunId {
    let outer = env(environment::RUN_ID.name);
    if let Some(id) = outer
        .as_ref()
        .and_then(|value| RunId::parse(value.to_str()?))
    {
        return id;
    }
    new_id()
}

/// A new random identity, from the operating system's entropy.
pub(crate) fn new_id() -> RunId {
    let mut bytes = [0u8; 16];
    let halves = [random_seed(), random_seed()];
    for (chunk, half) in bytes.chunks_mut(8).zip(halves) {
        chunk.copy_from_slice(&half.to_le_bytes());
    }
    RunId::from_random(bytes)
}

/// The run's tracing, if the environment asks for it, and what it could not use; a new trace's
/// id and the run's span drawn from the operating system's entropy.
pub(super) fn tracing(env: &impl Fn(&str) -> Option<OsString>) -> (Option<Tracing>, Vec<String>) {
    let mut problems = Vec::new();
    let ids = || {
        let mut trace_id = [0u8; 16];
        trace_id[..8].copy_from_slice(&random_seed().to_be_bytes());
        trace_id[8..].copy_from_slice(&random_seed().to_be_bytes());
        (trace_id, random_seed().to_be_bytes())
    };
    let tracing = Tracing::from_environment(env, ids, &mut problems);
    (tracing, problems)
}

/// A seed from the operating system's entropy, or from the clock if that is unavailable.
pub(super) fn random_seed() -> u64 {
    use rand::TryRng;
    rand::rngs::SysRng.try_next_u64().unwrap_or_else(|_| {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        split_mix(now.map_or(0, |since| since.as_nanos() as u64) ^ u64::from(std::process::id()))
    })
}
